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

package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
)

// A Namespace is a network namespace made with `ip netns add`, so that a
// test's watchdog can delete it with `ip netns delete` if the test process
// dies, with a netlink handle working inside it.
type Namespace struct {
	// Name is the namespace's name, for `ip netns exec`.
	Name string
	// NL is a netlink handle inside the namespace.
	NL *netlink.Handle

	handle vnetns.NsHandle
}

// Add makes the namespace name with its loopback up: sockets bound to
// 127.0.0.1 inside it need it. On error nothing of it is left.
func Add(name string) (n *Namespace, err error) {
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	n = &Namespace{Name: name, handle: -1}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Delete())
			n = nil
		}
	}()
	if n.handle, err = vnetns.GetFromName(name); err != nil {
		return n, fmt.Errorf("opening network namespace %s: %w", name, err)
	}
	if n.NL, err = netlink.NewHandleAt(n.handle); err != nil {
		return n, fmt.Errorf("netlink in network namespace %s: %w", name, err)
	}
	return n, SetUp(n.NL, "lo", netip.Prefix{})
}

// Path is the namespace's file, for nsenter --net.
func (n *Namespace) Path() string { return filepath.Join("/run/netns", n.Name) }

// Fd is the namespace's file descriptor, for moving a link into it
// (netlink.NsFd).
func (n *Namespace) Fd() int { return int(n.handle) }

// Do runs fn on a thread that has entered the namespace. Sockets fn opens
// belong to the namespace for their whole life, whichever thread uses them
// later, and /proc/sys/net shows the namespace's settings. The thread goes
// back to the host's namespace before the runtime may use it again. It must
// not end instead: children the test process starts (the cluster's
// processes, speakers, daemons) get SIGKILL when the thread that forked
// them exits (Pdeathsig), so a thread is let go only if it cannot return.
func (n *Namespace) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := vnetns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = host.Close() }()
		if err := vnetns.Set(n.handle); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", n.Name, err)
			return
		}
		err = fn()
		if rerr := vnetns.Set(host); rerr != nil {
			// Still inside: stay locked, so the thread ends with this
			// goroutine rather than serve another.
			errc <- errors.Join(err, fmt.Errorf("leaving network namespace %s: %w", n.Name, rerr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Dial opens a TCP connection from inside the namespace.
func (n *Namespace) Dial(ctx context.Context, addr string, timeout time.Duration) (conn net.Conn, err error) {
	err = n.Do(func() error {
		d := net.Dialer{Timeout: timeout}
		conn, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return conn, err
}

// Listen opens a TCP listener inside the namespace.
func (n *Namespace) Listen(addr string) (l net.Listener, err error) {
	err = n.Do(func() error {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// Delete closes the handles and deletes the namespace, and with it every
// link inside (a veth's peer too).
func (n *Namespace) Delete() error {
	if n.NL != nil {
		n.NL.Close()
	}
	if n.handle >= 0 {
		_ = n.handle.Close()
	}
	if out, err := exec.Command("ip", "netns", "delete", n.Name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns delete %s: %w: %s", n.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// bridgeName is the bridge's name inside its namespace.
const bridgeName = "br0"

// AddBridge makes the bridge inside n, up, that Plug connects namespaces
// to. The bridge lives in a namespace of its own so that deleting it
// deletes every port, however the test ends.
func AddBridge(n *Namespace) error {
	if err := n.NL.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: bridgeName}}); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	return SetUp(n.NL, bridgeName, netip.Prefix{})
}

// Attach puts the link port, inside the bridge's namespace, on the bridge
// and up.
func Attach(bridge *Namespace, port string) error {
	br, err := bridge.NL.LinkByName(bridgeName)
	if err != nil {
		return err
	}
	link, err := bridge.NL.LinkByName(port)
	if err != nil {
		return err
	}
	if err := bridge.NL.LinkSetMaster(link, br); err != nil {
		return err
	}
	return bridge.NL.LinkSetUp(link)
}

// Plug connects n to the bridge AddBridge made in bridge through a veth
// pair: port on the bridge, and inside n the link called link, with
// hardware address mac (the kernel's pick when nil) and address addr.
func Plug(bridge *Namespace, port string, n *Namespace, link string, mac net.HardwareAddr, addr netip.Prefix) error {
	if err := bridge.NL.LinkAdd(&netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: port},
		PeerName:  link, PeerNamespace: netlink.NsFd(n.handle),
	}); err != nil {
		return fmt.Errorf("port %s: %w", port, err)
	}
	if err := Attach(bridge, port); err != nil {
		return err
	}
	if mac != nil {
		l, err := n.NL.LinkByName(link)
		if err != nil {
			return err
		}
		if err := n.NL.LinkSetHardwareAddr(l, mac); err != nil {
			return fmt.Errorf("address %s on %s in %s: %w", mac, link, n.Name, err)
		}
	}
	return SetUp(n.NL, link, addr)
}

// SetUp brings the link called name up, with address addr (in addr's
// subnet) if valid. h says in which namespace.
func SetUp(h *netlink.Handle, name string, addr netip.Prefix) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	if addr.IsValid() {
		if err := h.AddrAdd(link, &netlink.Addr{IPNet: IPNet(addr)}); err != nil {
			return fmt.Errorf("address %s on %s: %w", addr, name, err)
		}
	}
	return h.LinkSetUp(link)
}

// IPNet is p as the net package spells it, for netlink.
func IPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
