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

package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/wire"
)

// demoRange is the class's range in the demo; the client reaches it on-link.
var demoRange = netip.MustParsePrefix("203.0.113.0/24")

// onTheWire ends the demo with a real request: a node namespace running the
// MetalLB speaker, a backend for Service B, and a client namespace that finds
// the address by ARP and asks it over HTTP. It needs root; otherwise it says
// why and skips. The bed keeps running with the cluster; stop returns a
// function that removes it.
func (d *demo) onTheWire(ctx context.Context, local *harness.Local, x string) (stop func(), err error) {
	step("A client on the wire asks " + x + " for the page Service B serves")
	if err := wire.CheckRequirements(); err != nil {
		fmt.Printf("    Skipping the request on the wire: %v.\n    Run make demo as root to see it.\n", err)
		return func() {}, nil
	}
	addr, err := netip.ParseAddr(x)
	if err != nil {
		return nil, err
	}
	fmt.Println("    Building a bridge, a node namespace running the MetalLB speaker, and a client namespace")
	bed, err := wire.Start(ctx, wire.Options{
		Cluster: local.Cluster,
		Nodes:   []wire.NodeOptions{{Name: "demo-node"}},
		Routes:  []netip.Prefix{demoRange},
	})
	if err != nil {
		return nil, err
	}
	stop = func() { _ = bed.Close() }
	backend, err := bed.StartBackend("web-b", bed.Nodes[0])
	if err != nil {
		stop()
		return nil, err
	}
	fmt.Printf("    A backend %q listens on %s:%d on demo-node; its EndpointSlice names it ready.\n",
		backend.Name, backend.Address, wire.BackendPort)
	if err := bed.WriteEndpoints(ctx, "demo", "b", backend.Endpoint(true)); err != nil {
		stop()
		return nil, err
	}
	probes := bed.ProbeSeries(ctx, addr, wire.ProbeOptions{Interval: 20 * time.Millisecond, Duration: time.Minute,
		Until: func(ps []wire.Probe) bool { return len(ps) > 0 && ps[len(ps)-1].OK() }})
	last := probes[len(probes)-1]
	if !last.OK() {
		stop()
		return nil, fmt.Errorf("no answer from %s within a minute: %v", x, last.Err)
	}
	fmt.Printf("\n    GET http://%s/ from the client namespace (what `ip netns exec %s curl http://%s/` does):\n    %s\n",
		x, bed.ClientNetns(), x, last.Body)
	nodes, _ := bed.WhoHas(addr, 300*time.Millisecond)
	for _, n := range nodes {
		fmt.Printf("    The speaker on %s answered ARP for %s with %s.\n", n.Name, x, n.MAC)
	}
	fmt.Printf("    The first answer came %s after the endpoints were written (%d probes).\n",
		last.At.Add(last.Took).Sub(probes[0].At).Round(time.Millisecond), len(probes))
	return stop, nil
}
