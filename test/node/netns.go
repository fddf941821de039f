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

package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// namespace is a network namespace made with `ip netns add` (so that the
// cluster's watchdog deletes it with `ip netns delete`), with a netlink
// handle working inside it.
type namespace struct {
	name   string
	handle netns.NsHandle
	nl     *netlink.Handle
}

func addNamespace(name string) (*namespace, error) {
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	n := &namespace{name: name, handle: -1}
	var err error
	if n.handle, err = netns.GetFromName(name); err != nil {
		return n, fmt.Errorf("opening network namespace %s: %w", name, err)
	}
	if n.nl, err = netlink.NewHandleAt(n.handle); err != nil {
		return n, fmt.Errorf("netlink in network namespace %s: %w", name, err)
	}
	lo, err := n.nl.LinkByName("lo")
	if err != nil {
		return n, err
	}
	return n, n.nl.LinkSetUp(lo)
}

// path is the namespace's file, for nsenter --net.
func (n *namespace) path() string { return filepath.Join("/run/netns", n.name) }

// do runs fn on a thread that has entered the namespace. Sockets fn opens
// belong to the namespace for their whole life, and /proc/sys/net shows the
// namespace's settings. The thread goes back to the host's namespace before
// the runtime may use it again, and is let go only if it cannot (children
// the test process starts get SIGKILL when the thread that forked them
// ends, Pdeathsig).
func (n *namespace) do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = host.Close() }()
		if err := netns.Set(n.handle); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", n.name, err)
			return
		}
		err = fn()
		if rerr := netns.Set(host); rerr != nil {
			errc <- errors.Join(err, fmt.Errorf("leaving network namespace %s: %w", n.name, rerr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// sysctl sets the namespace's own kernel settings: keys under net/ only.
func (n *namespace) sysctl(settings map[string]string) error {
	return n.do(func() error {
		for k, v := range settings {
			if !strings.HasPrefix(k, "net/") {
				return fmt.Errorf("%s is no per-namespace setting", k)
			}
			if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// dial opens a TCP connection from inside the namespace.
func (n *namespace) dial(ctx context.Context, addr string) (conn net.Conn, err error) {
	err = n.do(func() error {
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}

// listen opens a TCP listener inside the namespace.
func (n *namespace) listen(addr string) (l net.Listener, err error) {
	err = n.do(func() error {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// route adds a route to dst through gateway gw (on-link when gw is
// invalid) over the link called dev.
func (n *namespace) route(dst netip.Prefix, gw netip.Addr, dev string) error {
	link, err := n.nl.LinkByName(dev)
	if err != nil {
		return err
	}
	r := &netlink.Route{LinkIndex: link.Attrs().Index, Dst: ipNet(dst)}
	if gw.IsValid() {
		r.Gw = gw.AsSlice()
	}
	if err := n.nl.RouteAdd(r); err != nil {
		return fmt.Errorf("route to %s via %s in %s: %w", dst, gw, n.name, err)
	}
	return nil
}

func (n *namespace) delete() error {
	if n.nl != nil {
		n.nl.Close()
	}
	if n.handle >= 0 {
		_ = n.handle.Close()
	}
	if out, err := exec.Command("ip", "netns", "delete", n.name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns delete %s: %w: %s", n.name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// setUp brings link up, with address addr (in prefix's subnet) if valid.
func setUp(h *netlink.Handle, name string, addr netip.Prefix) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	if addr.IsValid() {
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: addr.Addr().AsSlice(), Mask: net.CIDRMask(addr.Bits(), addr.Addr().BitLen())}}); err != nil {
			return fmt.Errorf("address %s on %s: %w", addr, name, err)
		}
	}
	return h.LinkSetUp(link)
}
