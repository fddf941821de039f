/*
Copyright 2026 The address-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package images

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A sandbox is a running pause process.
type sandbox struct {
	cmd *exec.Cmd
	// exited is closed once the process has ended, and err says how.
	exited chan struct{}
	err    error
}

// startPause starts the pause binary of the pause image as a pod's sandbox
// runs: PID 1 of its own PID namespace (which needs root), where the
// kernel delivers it only the signals it handles. The test's end kills it.
func startPause(t *testing.T) *sandbox {
	t.Helper()
	var bin string
	for _, a := range archives(t) {
		if a.Image.Name == "pause" {
			bin = checkLayer(t, readImage(t, a), a)
		}
	}
	s := &sandbox{cmd: exec.Command(bin), exited: make(chan struct{})}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting pause in a PID namespace of its own (this needs root): %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
	// The Go runtime catches every signal from the start, before pause's
	// own handler, and as the first process of its PID namespace exits 2
	// on a SIGTERM that reaches it then: pause is ready once it says so.
	pid := s.cmd.Process.Pid
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		said <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-said:
		if strings.TrimSpace(line) != "pause: waiting for SIGTERM or SIGINT" {
			t.Fatalf("pause (pid %d) said %q, want that it waits for SIGTERM or SIGINT", pid, line)
		}
	case <-time.After(time.Minute):
		t.Fatalf("pause (pid %d) has not said it waits for SIGTERM or SIGINT a minute after it started", pid)
	}
	if !catches(t, pid, syscall.SIGTERM, syscall.SIGINT) {
		t.Fatalf("pause (pid %d) says it waits for SIGTERM and SIGINT, and catches neither", pid)
	}
	// It runs until told to stop.
	select {
	case <-s.exited:
		t.Fatalf("pause exited by itself: %v", s.err)
	default:
	}
	return s
}

// catches says whether process pid has a handler for each of sigs (the
// SigCgt mask in /proc/<pid>/status); a process that has exited has none.
func catches(t *testing.T, pid int, sigs ...syscall.Signal) bool {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		mask, ok := strings.CutPrefix(line, "SigCgt:")
		if !ok {
			continue
		}
		caught, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status: %q: %v", pid, line, err)
		}
		for _, sig := range sigs {
			if caught&(1<<(uint(sig)-1)) == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// TestPauseStopsOnSignals checks that pause exits 0 on SIGTERM and on
// SIGINT, as the runtime stops a sandbox.
func TestPauseStopsOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startPause(t)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-s.exited:
				if s.err != nil {
					t.Fatalf("pause ended with %v on %s, want exit 0", s.err, sig)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("pause still runs 10 s after %s", sig)
			}
		})
	}
}

// TestPauseReapsOrphans leaves a process orphaned in pause's PID namespace,
// as a container of a pod that shares its process namespace does, and
// checks that pause adopts it and, once it exits, leaves no zombie.
func TestPauseReapsOrphans(t *testing.T) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Fatalf("this test enters pause's PID namespace with util-linux's nsenter: %v", err)
	}
	pid := startPause(t).cmd.Process.Pid
	// The shell exits at once; its sleep lives on, orphaned.
	out, err := exec.Command(nsenter, "--target", strconv.Itoa(pid), "--pid", "--",
		"sh", "-c", "sleep 2 >/dev/null 2>&1 &").CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter: %v\n%s", err, out)
	}

	sleeping := func() bool {
		for _, c := range childrenOf(t, pid) {
			if c.comm == "sleep" && c.state != "Z" {
				return true
			}
		}
		return false
	}
	if !within(5*time.Second, sleeping) {
		t.Fatalf("pause (pid %d) has not adopted the orphaned sleep: its children are %+v", pid, childrenOf(t, pid))
	}
	if !within(15*time.Second, func() bool { return len(childrenOf(t, pid)) == 0 }) {
		t.Fatalf("pause (pid %d) still has children after the sleep ended: %+v (state Z: a zombie it did not reap)",
			pid, childrenOf(t, pid))
	}
}

// within polls cond until it holds or d has passed, and says whether it held.
func within(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A process is one entry of /proc.
type process struct {
	pid         int
	comm, state string
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []process {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var children []process
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // it exited meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid != pid {
			continue
		}
		child, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		children = append(children, process{pid: child, comm: s[open+1 : end], state: fields[0]})
	}
	return children
}
