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

// Package slot bounds how many test binaries do their heavy part at once,
// across the processes go test starts.
//
// go test -p N runs N actions at a time, and a test binary's link is one of
// them: while N packages run, the next one is not linked, and a slot that
// frees up waits for a link. make test therefore runs go test with one more
// action than there are slots (TEST_SLOTS): the extra one links the next
// binary while the others run, and that binary waits here until a running
// package ends. A package takes a slot before it starts a control plane
// (test/cluster does it) or compiles at length, and keeps it until it
// exits; the lock is the kernel's, so a crashed binary frees its slot.
//
// Without TEST_SLOTS and TEST_SLOT_DIR nothing is bounded.
package slot

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// WaitedPrefix starts the line Take prints when it had to wait, with the
// time after it; hack/testtimes reads it to tell running from waiting.
const WaitedPrefix = "test slot: waited "

var taken struct {
	once sync.Once
	err  error
	// file is the locked slot, kept reachable so that no finalizer closes
	// it, which would unlock it.
	file *os.File
}

// Take returns once this process holds a slot, at once if it already does.
func Take() error {
	taken.once.Do(func() { taken.err = take(os.Getenv("TEST_SLOT_DIR"), os.Getenv("TEST_SLOTS")) })
	return taken.err
}

// take locks one of the files slot-0 ... slot-<n-1> in dir and keeps it
// locked until the process exits.
func take(dir, count string) error {
	if dir == "" || count == "" {
		return nil
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return fmt.Errorf("TEST_SLOTS=%q: want a positive number", count)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := make([]*os.File, n)
	for i := range files {
		f, err := os.OpenFile(filepath.Join(dir, "slot-"+strconv.Itoa(i)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return err
		}
		files[i] = f
	}
	for i, f := range files {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			taken.file = f
			closeAllBut(files, i)
			return nil
		}
	}
	// Every slot is held: wait on all of them, keep the first that frees up,
	// and let go of any other at once.
	start := time.Now()
	won := make(chan int, n)
	for i, f := range files {
		go func() {
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) == nil {
				won <- i
			}
		}()
	}
	taken.file = files[<-won]
	go func() {
		for i := range won {
			_ = files[i].Close()
		}
	}()
	fmt.Fprintf(os.Stderr, "%s%.1fs\n", WaitedPrefix, time.Since(start).Seconds())
	return nil
}

// closeAllBut closes every file but the one at keep.
func closeAllBut(files []*os.File, keep int) {
	for i, f := range files {
		if i != keep {
			_ = f.Close()
		}
	}
}
