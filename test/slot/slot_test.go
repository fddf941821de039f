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

package slot

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// holderEnv makes this test binary a process that takes a slot, says so,
// and keeps it until its standard input closes.
const holderEnv = "SLOT_TEST_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(holderEnv) != "" {
		if err := Take(); err != nil {
			os.Exit(2)
		}
		_, _ = os.Stdout.WriteString("held\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hold starts a process that holds one of dir's count slots until the
// returned function is called.
func hold(t *testing.T, dir, count string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holderEnv+"=1", "TEST_SLOT_DIR="+dir, "TEST_SLOTS="+count)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the holder said %q (%v)", line, err)
	}
	return func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
}

// locked says whether another open file description holds the lock on path.
func locked(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

func TestAFreeSlotIsTakenAtOnce(t *testing.T) {
	dir := t.TempDir()
	release := hold(t, dir, "2")
	defer release()
	if err := take(dir, "2"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"slot-0", "slot-1"} {
		if !locked(t, filepath.Join(dir, name)) {
			t.Errorf("%s is free: with two takers, both slots should be held", name)
		}
	}
}

func TestATakerWaitsUntilAHolderExits(t *testing.T) {
	dir := t.TempDir()
	release := hold(t, dir, "1")
	done := make(chan error, 1)
	go func() { done <- take(dir, "1") }()
	// The holder still has the slot: nothing may have been taken.
	if !locked(t, filepath.Join(dir, "slot-0")) {
		t.Fatal("the holder's slot is free while it runs")
	}
	select {
	case err := <-done:
		t.Fatalf("took the only slot while another process held it (%v)", err)
	default:
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the slot its holder left was not taken")
	}
	if !locked(t, filepath.Join(dir, "slot-0")) {
		t.Error("take returned without holding the slot")
	}
}

func TestNothingIsBoundedWithoutTheSettings(t *testing.T) {
	if err := take("", ""); err != nil {
		t.Fatal(err)
	}
	if err := take(t.TempDir(), "none"); err == nil {
		t.Error("TEST_SLOTS=none was taken for a number")
	}
}
