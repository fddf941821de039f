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
	"context"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// tiedBy is a handover planned by a stand-in backend: 192.0.2.0/28 moves,
// .13 is one the class would not give, and a Service labelled "pool" names
// that pool. Planning reads nothing else of it.
type tiedBy struct{ driver.Handover }

func (tiedBy) PlanHandover(context.Context, client.Reader, *v1alpha1.IPAddressClass, []netip.Addr) (driver.Handover, error) {
	return tiedBy{}, nil
}
func (tiedBy) Moving() []ipaddr.Range {
	r, _ := ipaddr.ParseRange("192.0.2.0/28")
	return []ipaddr.Range{r}
}
func (tiedBy) Takes(_ *corev1.Service, ip netip.Addr) bool {
	return ip != netip.MustParseAddr("192.0.2.13")
}
func (tiedBy) Tie(svc *corev1.Service) string {
	if pool := svc.Labels["pool"]; pool != "" {
		return "names pool " + pool
	}
	return ""
}
func (tiedBy) Steps() []string { return []string{"shrink the pool"} }

// TestPlanHandoverUntiesOnlyWhatItImported: of the Services holding an
// address that moves, an imported one tied to the old configuration is
// untied first; one not imported blocks the handover, with why; Services
// holding nothing that moves are none of its business.
func TestPlanHandoverUntiesOnlyWhatItImported(t *testing.T) {
	g := NewWithT(t)
	svc := func(name, ip, pool string) corev1.Service {
		s := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
		if pool != "" {
			s.Labels = map[string]string{"pool": pool}
		}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		return s
	}
	o := &observed{class: &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: "public"}}, all: []corev1.Service{
		svc("imported-tied", "192.0.2.1", "legacy"),
		svc("imported", "192.0.2.2", ""),
		svc("stranger-tied", "192.0.2.3", "legacy"),
		svc("stranger", "192.0.2.4", ""),
		svc("elsewhere-tied", "198.51.100.1", "other"),
		svc("refused", "192.0.2.13", ""),
	}}
	plan := Plan{Class: "public", Imports: []Import{
		{Service: Service{Namespace: "ns", Name: "imported-tied", UID: "uid-imported-tied"}, Addresses: ips("192.0.2.1"), Action: ActionImported},
		{Service: Service{Namespace: "ns", Name: "imported", UID: "uid-imported"}, Addresses: ips("192.0.2.2"), Action: ActionImported},
	}}
	h, err := planHandover(context.Background(), nil, tiedBy{}, o, plan)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Unties).To(HaveLen(1))
	g.Expect(h.Unties[0].Service).To(Equal("ns/imported-tied"))
	g.Expect(h.Steps()).To(Equal([]string{
		"untie imported Service ns/imported-tied first: it names pool legacy; that goes, and its pin and claim keep its addresses",
		"shrink the pool",
	}))
	g.Expect(h.Blockers).To(ConsistOf(
		"Service ns/stranger-tied holds 192.0.2.3 but names pool legacy, so it would lose it: import it first, or remove that by hand",
		"Service ns/refused holds 192.0.2.13, which class public would not give it",
	))
	movers := make([]string, 0, len(h.movers))
	for _, m := range h.movers {
		movers = append(movers, m.Name)
	}
	g.Expect(movers).To(ConsistOf("imported-tied", "imported", "stranger-tied", "stranger", "refused"))
	err = handover(context.Background(), nil, h, "public", "metallb-iad", 0)
	g.Expect(err).To(MatchError(ContainSubstring("the handover would take addresses away")))
}
