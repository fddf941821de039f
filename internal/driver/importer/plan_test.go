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

package importer

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

func ips(s ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(s))
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// lb is a LoadBalancer Service in namespace ns reporting the addresses,
// with the families of those addresses.
func lb(ns, name string, addrs ...string) Service {
	s := Service{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Type: corev1.ServiceTypeLoadBalancer, Ingress: sorted(ips(addrs...))}
	s.Families = familiesOf(s.Ingress)
	return s
}

func inventory(services ...Service) Inventory {
	inv := Inventory{Class: "public", Driver: "example-iad", Holders: map[netip.Addr][]string{}, Ledger: map[netip.Addr]Ledgered{}, Claims: map[string]Claim{},
		Ranges: []ipaddr.Range{mustRange("10.0.0.0/24"), mustRange("fd00::/120")}, Services: services}
	for _, s := range services {
		for _, ip := range s.Ingress {
			inv.Holders[ip] = append(inv.Holders[ip], s.Key())
		}
	}
	return inv
}

func mustRange(s string) ipaddr.Range {
	r, err := ipaddr.ParseRange(s)
	if err != nil {
		panic(err)
	}
	return r
}

func TestMakePlanSkipReasons(t *testing.T) {
	with := func(s Service, f func(*Service)) Service { f(&s); return s }
	tests := []struct {
		name    string
		service Service
		setup   func(*Inventory)
		reason  string // "" when imported; "-" when not listed at all
	}{
		{name: "IPv4", service: lb("a", "web", "10.0.0.7")},
		{name: "IPv6", service: with(lb("a", "web", "fd00::7"), func(s *Service) { s.Families = []v1alpha1.IPFamily{v1alpha1.IPv6} })},
		{name: "dual-stack", service: lb("a", "web", "fd00::7", "10.0.0.7")},
		{name: "pinned by hand to what it holds", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) { s.Pin = ips("10.0.0.7") })},
		{name: "outside the class", service: lb("a", "web", "192.0.2.7"), reason: "address 192.0.2.7 is outside class public"},
		{name: "dual-stack half outside", service: lb("a", "web", "10.0.0.7", "2001:db8::7"), reason: "address 2001:db8::7 is outside class public"},
		{name: "an address the allocator never gives", service: lb("a", "web", "10.0.0.255"), setup: func(inv *Inventory) {
			inv.Refuses = func(ip netip.Addr) string {
				if ip == netip.MustParseAddr("10.0.0.255") {
					return "is the broadcast address"
				}
				return ""
			}
		}, reason: "address 10.0.0.255 is the broadcast address"},
		{name: "sharing an address", service: lb("a", "web", "10.0.0.7"),
			setup:  func(inv *Inventory) { inv.Holders[netip.MustParseAddr("10.0.0.7")] = []string{"a/web", "b/dns"} },
			reason: "shares 10.0.0.7 with Service b/dns; a claim's address goes to one Service"},
		{name: "in the ledger for another claim", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) { s.Pin = ips("10.0.0.7") }),
			setup: func(inv *Inventory) {
				inv.Ledger[netip.MustParseAddr("10.0.0.7")] = Ledgered{Name: "ip-10-0-0-7", Claim: "b/db"}
			},
			reason: "10.0.0.7 is in the ledger already: IPAddress ip-10-0-0-7, bound to IPAddressClaim b/db"},
		{name: "placeholder", service: with(lb("example-iad-system", "hold-ip-10-0-0-7", "10.0.0.7"), func(s *Service) { s.Placeholder = true }),
			reason: "a placeholder of example-iad"},
		{name: "placeholder outside the class is not listed", service: with(lb("example-iad-system", "hold-x", "192.0.2.7"), func(s *Service) { s.Placeholder = true }),
			reason: "-"},
		{name: "ClusterIP pinned into the class", service: Service{Namespace: "a", Name: "web", Type: corev1.ServiceTypeClusterIP, Pin: ips("10.0.0.7")},
			reason: "type ClusterIP, not LoadBalancer"},
		{name: "ClusterIP elsewhere is not listed", service: Service{Namespace: "a", Name: "web", Type: corev1.ServiceTypeClusterIP}, reason: "-"},
		{name: "pinned, nothing assigned", service: with(lb("a", "web"), func(s *Service) { s.Pin = ips("10.0.0.7") }),
			reason: "its load balancer reports no address"},
		{name: "being deleted", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) { s.Deleting = true }), reason: "being deleted"},
		{name: "names a claim already", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) { s.Claim = "mine" }),
			setup:  func(inv *Inventory) { inv.Claims["a/mine"] = Claim{} },
			reason: "already names IPAddressClaim mine"},
		{name: "pin differs from what it holds", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) { s.Pin = ips("10.0.0.8") }),
			reason: "pinned to 10.0.0.8 but holds 10.0.0.7"},
		{name: "dual-stack Service holding one family", service: with(lb("a", "web", "10.0.0.7"), func(s *Service) {
			s.Families = []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6}
		}), reason: "a claim needs one address of each family"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := inventory(tt.service)
			if tt.setup != nil {
				tt.setup(&inv)
			}
			p := MakePlan(inv)
			switch tt.reason {
			case "-":
				if len(p.Imports)+len(p.Skips) != 0 {
					t.Fatalf("want the Service left out, got %+v", p)
				}
			case "":
				if len(p.Imports) != 1 || len(p.Skips) != 0 {
					t.Fatalf("want one import, got %+v", p)
				}
				im := p.Imports[0]
				if im.Claim != "web" || im.Action != ActionImport || im.Family != familyOf(tt.service.Ingress) {
					t.Fatalf("import = %+v", im)
				}
			default:
				if len(p.Skips) != 1 || len(p.Imports) != 0 || !strings.Contains(p.Skips[0].Reason, tt.reason) {
					t.Fatalf("want a skip with %q, got %+v", tt.reason, p)
				}
			}
		})
	}
}

func TestMakePlanFamilies(t *testing.T) {
	p := MakePlan(inventory(lb("a", "v4", "10.0.0.1"), lb("a", "v6", "fd00::1"), lb("a", "dual", "fd00::2", "10.0.0.2")))
	got := map[string]v1alpha1.IPFamily{}
	for _, im := range p.Imports {
		got[im.Service.Name] = im.Family
	}
	want := map[string]v1alpha1.IPFamily{"v4": v1alpha1.IPv4, "v6": v1alpha1.IPv6, "dual": v1alpha1.Dual}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: family %s, want %s", k, got[k], v)
		}
	}
	if dual := p.Imports[0]; dual.Service.Name != "dual" || dual.Addresses[0] != netip.MustParseAddr("10.0.0.2") {
		t.Errorf("want the dual-stack Service first with IPv4 first, got %+v", dual)
	}
}

func TestClaimNameRule(t *testing.T) {
	inv := inventory(lb("a", "web", "10.0.0.1"), lb("a", "web-imported", "10.0.0.2"), lb("a", "db", "10.0.0.3"),
		lb("a", "api", "10.0.0.4"), lb("b", "web", "10.0.0.5"))
	inv.Claims["a/web"] = Claim{}          // someone else's claim named after the Service
	inv.Claims["a/api"] = Claim{}          // and another
	inv.Claims["a/api-imported"] = Claim{} // whose first alternative is taken too
	// An earlier run began importing db under a suffixed name.
	inv.Claims["a/db-imported"] = Claim{ImportedFor: "uid-db"}
	inv.Claims["a/db"] = Claim{}
	got := map[string]string{}
	for _, im := range MakePlan(inv).Imports {
		got[im.Service.Key()] = im.Claim + " " + im.Action
	}
	want := map[string]string{
		// The Service named web-imported keeps its own name; web has to go
		// further.
		"a/web-imported": "web-imported import",
		"a/web":          "web-imported-2 import",
		"a/api":          "api-imported-2 import",
		"a/db":           "db-imported resume",
		"b/web":          "web import",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: claim %q, want %q", k, got[k], v)
		}
	}
}

func TestMakePlanResumes(t *testing.T) {
	s := lb("a", "web", "10.0.0.7")
	s.Pin, s.Claim = ips("10.0.0.7"), "web"
	inv := inventory(s)
	inv.Claims["a/web"] = Claim{ImportedFor: s.UID, Phase: v1alpha1.ClaimPending}
	if im := MakePlan(inv).Imports; len(im) != 1 || im[0].Action != ActionResume {
		t.Fatalf("claim made, no address: want resume, got %+v", im)
	}
	inv.Ledger[netip.MustParseAddr("10.0.0.7")] = Ledgered{Name: "ip-10-0-0-7", ImportedFor: s.UID, Claim: "a/web"}
	inv.Claims["a/web"] = Claim{ImportedFor: s.UID, Phase: v1alpha1.ClaimBound}
	if im := MakePlan(inv).Imports; len(im) != 1 || im[0].Action != ActionImported {
		t.Fatalf("all done: want imported, got %+v", im)
	}
}

func TestPrintPlan(t *testing.T) {
	inv := inventory(lb("a", "web", "10.0.0.7"), lb("a", "far", "192.0.2.1"))
	inv.Claims["a/web"] = Claim{}
	var out bytes.Buffer
	printPlan(&out, MakePlan(inv), Scope{Namespaces: []string{"a"}})
	for _, want := range []string{
		"SERVICE", "a/web", "10.0.0.7", "a/web-imported (IPv4)", "import (IPAddressClaim web exists already)",
		"a/far", "skip: address 192.0.2.1 is outside class public",
		"class public: 1 to import, 0 imported already, 1 skipped (namespace a)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
