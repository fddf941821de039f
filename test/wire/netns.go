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

package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// netns is a network namespace made with `ip netns add`.
type netns struct {
	name string
	file *os.File
}

func addNetns(name string) (*netns, error) {
	if err := runIP("netns", "add", name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join("/run/netns", name))
	if err != nil {
		_ = runIP("netns", "delete", name)
		return nil, err
	}
	return &netns{name: name, file: f}, nil
}

// do runs fn on a thread that has entered the namespace. Sockets fn opens
// belong to the namespace for their whole life, whichever thread uses them
// later. The thread goes back to the host's namespace before the runtime
// may use it again. It must not end instead: children the test process
// starts (the cluster's processes, the speakers) get SIGKILL when the thread
// that forked them exits (Pdeathsig), so a thread is let go only if it
// cannot return.
func (n *netns) do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = host.Close() }()
		if err := unix.Setns(int(n.file.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", n.name, err)
			return
		}
		err = fn()
		if rerr := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); rerr != nil {
			// Still inside: stay locked, so the thread ends with this
			// goroutine rather than serve another.
			errc <- errors.Join(err, fmt.Errorf("leaving network namespace %s: %w", n.name, rerr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// ip runs `ip -n <namespace> args...`.
func (n *netns) ip(args ...string) error {
	return runIP(append([]string{"-n", n.name}, args...)...)
}

// sysctl sets kernel parameters inside the namespace.
func (n *netns) sysctl(settings ...string) error {
	return runIP(append([]string{"netns", "exec", n.name, "sysctl", "-q", "-w"}, settings...)...)
}

// dial opens a TCP connection from inside the namespace.
func (n *netns) dial(ctx context.Context, addr string, timeout time.Duration) (conn net.Conn, err error) {
	err = n.do(func() error {
		d := net.Dialer{Timeout: timeout}
		conn, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}

// listen opens a TCP listener inside the namespace.
func (n *netns) listen(addr string) (l net.Listener, err error) {
	err = n.do(func() error {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

func (n *netns) delete() error {
	_ = n.file.Close()
	return runIP("netns", "delete", n.name)
}

// runIP runs iproute2's `ip args...`, with its output in the error.
func runIP(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
