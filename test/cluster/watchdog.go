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

package cluster

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// watchdogScript collects process-group ids, folders and network namespaces
// on its stdin until the pipe closes, which happens when the process that
// started it dies, by any signal or exit. It then kills every group, removes
// every folder and deletes every network namespace. A "cgroup" line names a
// cgroup folder (a node's, test/node) whose processes it kills, however
// they were started, before removing the folder and those below it. A
// "forget" line clears what it collected, after an orderly stop; "unnetns"
// and "uncgroup" forget one namespace or cgroup its owner removed itself.
const watchdogScript = `
groups=""; dirs=""; nets=""; cgroups=""
while read -r verb arg; do
  case "$verb" in
    group) groups="$groups $arg" ;;
    dir) dirs="$dirs $arg" ;;
    netns) nets="$nets $arg" ;;
    unnetns) nets=$(printf '%s\n' $nets | grep -vx -- "$arg" | tr '\n' ' ') ;;
    cgroup) cgroups="$cgroups $arg" ;;
    uncgroup) cgroups=$(printf '%s\n' $cgroups | grep -vx -- "$arg" | tr '\n' ' ') ;;
    forget) groups=""; dirs=""; nets=""; cgroups="" ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
for c in $cgroups; do
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids=$(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null)
    [ -z "$pids" ] && break
    kill -s KILL $pids 2>/dev/null; sleep 0.5
  done
  find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
done
for n in $nets; do ip netns delete "$n" 2>/dev/null; done
for d in $dirs; do rm -rf "$d"; done
exit 0
`

// watchdog is the process that cleans up after this one if it dies.
type watchdog struct {
	mu    sync.Mutex
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

func startWatchdog() (*watchdog, error) {
	cmd := exec.Command("/bin/bash", "-c", watchdogScript)
	// Its own process group, so that a Ctrl-C at the terminal, which reaches
	// the test's group, does not kill the watchdog before it cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting watchdog: %w", err)
	}
	return &watchdog{stdin: stdin, cmd: cmd}, nil
}

func (w *watchdog) send(verb, arg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin != nil {
		_, _ = fmt.Fprintf(w.stdin, "%s %s\n", verb, arg)
	}
}

// watchGroup asks the watchdog to kill process group pgid if we die.
func (w *watchdog) watchGroup(pgid int) { w.send("group", fmt.Sprint(pgid)) }

// watchDir asks the watchdog to remove dir if we die.
func (w *watchdog) watchDir(dir string) { w.send("dir", dir) }

// watchNetns asks the watchdog to delete network namespace name if we die;
// unwatchNetns withdraws the request once the namespace is gone.
func (w *watchdog) watchNetns(name string)   { w.send("netns", name) }
func (w *watchdog) unwatchNetns(name string) { w.send("unnetns", name) }

// watchCgroup asks the watchdog to kill every process in cgroup folder dir
// and below, and to remove them, if we die; unwatchCgroup withdraws that.
func (w *watchdog) watchCgroup(dir string)   { w.send("cgroup", dir) }
func (w *watchdog) unwatchCgroup(dir string) { w.send("uncgroup", dir) }

// release ends the watchdog after an orderly stop, having it forget what it
// watched, since those process ids may already belong to someone else.
func (w *watchdog) release() {
	w.send("forget", "-")
	w.mu.Lock()
	stdin := w.stdin
	w.stdin = nil
	w.mu.Unlock()
	if stdin != nil {
		_ = stdin.Close()
		_ = w.cmd.Wait()
	}
}
