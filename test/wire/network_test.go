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
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/cozystack/address-controller/test/netns"
)

// TestNetworkWithoutSpeaker checks the bed's network alone: a node's kernel
// answers ARP for its own address on the bridge but never for an address on
// its loopback, so only a speaker can lead the client there; and once the
// client knows the node's MAC, the data path to such an address works.
func TestNetworkWithoutSpeaker(t *testing.T) {
	if err := CheckRequirements(); err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	b := &Bed{id: "wiret-" + hex.EncodeToString(suffix), log: t.Logf}
	addNamespace := func(role string) *namespace {
		n, err := netns.Add(b.id + "-" + role)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := n.Delete(); err != nil {
				t.Error(err)
			}
		})
		return &namespace{n}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	b.bridge = addNamespace("br")
	must(netns.AddBridge(b.bridge.Namespace))
	b.client = addNamespace("client")
	must(b.plug(b.client, "pc", clientMAC, ClientAddress))
	must(b.client.ip("route", "add", LoadBalancerRange.String(), "dev", LinkName))
	node := &Node{Name: "n0", Address: netip.MustParseAddr("192.0.2.129"), MAC: net.HardwareAddr{2, 0, 0xc0, 0, 2, 0x81}, ns: addNamespace("n0")}
	must(node.ns.sysctl("net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2"))
	must(b.plug(node.ns, "p0", node.MAC, node.Address))
	b.Nodes = []*Node{node}
	vip := netip.MustParseAddr("198.51.100.201")
	must(node.ns.ip("addr", "add", netip.PrefixFrom(vip, 32).String(), "dev", localLink))
	if held, err := node.Holds(vip); err != nil || !held {
		t.Fatalf("Holds(%s) = %v, %v; want true", vip, held, err)
	}
	l, err := node.ns.Listen(":80")
	must(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("n0\n")) })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	if nodes, err := b.WhoHas(node.Address, 300*time.Millisecond); err != nil || len(nodes) != 1 || nodes[0] != node {
		t.Fatalf("WhoHas(node address) = %v, %v; want the node", nodes, err)
	}
	if nodes, err := b.WhoHas(vip, 300*time.Millisecond); err != nil || len(nodes) != 0 {
		t.Fatalf("WhoHas(%s) = %v, %v; the kernel must not answer for its loopback", vip, nodes, err)
	}
	ctx := context.Background()
	if body, err := b.Get(ctx, vip, 500*time.Millisecond); err == nil {
		t.Fatalf("reached %s (%q) without an ARP answer", vip, body)
	}

	// What a speaker's answer would do: tell the client the node's MAC.
	must(b.client.ip("neigh", "replace", vip.String(), "lladdr", node.MAC.String(), "dev", LinkName))
	probes := b.ProbeSeries(ctx, vip, ProbeOptions{Interval: 10 * time.Millisecond, Duration: time.Second})
	ok := 0
	for _, p := range probes {
		if p.OK() && p.Body == "n0" {
			ok++
		}
	}
	if len(probes) < 50 || ok != len(probes) {
		t.Fatalf("%d of %d probes in a second answered; want at least 50, all answered", ok, len(probes))
	}
	must(b.ForgetNeighbours())
	if _, err := b.Get(ctx, vip, 500*time.Millisecond); err == nil {
		t.Fatalf("reached %s after forgetting the neighbours", vip)
	}
}
