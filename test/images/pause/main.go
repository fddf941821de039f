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

// Command pause is the pod sandbox's process in the images test/images
// writes: it holds the pod's namespaces open, doing nothing, until the
// runtime stops it with SIGTERM or SIGINT, and exits 0 then. As PID 1 of a
// pod that shares its process namespace, it reaps the children orphaned to
// it, as Kubernetes' own pause does. Once it handles those signals it says
// so on standard output (the runtime discards it): before that, the Go
// runtime's own handler takes SIGTERM, and, the default action being
// ignored by the first process of a PID namespace, exits 2.
//
// It is a Go program, not Kubernetes' C pause, so that it builds from this
// module alone, for any platform, without a C toolchain.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is what --version prints; the sandbox image's tag is independent.
const version = "address-controller-pause 1"

// ready is the line it prints once SIGTERM and SIGINT stop it cleanly.
const ready = "pause: waiting for SIGTERM or SIGINT"

func main() {
	for _, arg := range os.Args[1:] {
		switch arg {
		case "-v", "--version", "-version":
			fmt.Println(version)
			return
		default:
			fmt.Fprintf(os.Stderr, "pause takes no arguments but --version, not %q\n", arg)
			os.Exit(2)
		}
	}

	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	fmt.Println(ready)
	for s := range signals {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap waits for every child that has exited, so that none stays a zombie.
// Signals coalesce: one SIGCHLD may stand for several children.
func reap() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
