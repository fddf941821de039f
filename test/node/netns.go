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
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cozystack/address-controller/test/netns"
)

// dialTimeout bounds how long a connection from inside a namespace may
// take to open.
const dialTimeout = 5 * time.Second

// namespace is one of the harness's network namespaces, with the settings
// and routes only a node or the client needs.
type namespace struct {
	*netns.Namespace
}

// sysctl sets the namespace's own kernel settings: keys under net/ only.
func (n *namespace) sysctl(settings map[string]string) error {
	return n.Do(func() error {
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
func (n *namespace) dial(ctx context.Context, addr string) (net.Conn, error) {
	return n.Dial(ctx, addr, dialTimeout)
}

// route adds a route to dst through gateway gw (on-link when gw is
// invalid) over the namespace's link on the segment.
func (n *namespace) route(dst netip.Prefix, gw netip.Addr) error {
	link, err := n.NL.LinkByName(linkName)
	if err != nil {
		return err
	}
	r := &netlink.Route{LinkIndex: link.Attrs().Index, Dst: netns.IPNet(dst)}
	if gw.IsValid() {
		r.Gw = gw.AsSlice()
	}
	if err := n.NL.RouteAdd(r); err != nil {
		return fmt.Errorf("route to %s via %s in %s: %w", dst, gw, n.Name, err)
	}
	return nil
}
