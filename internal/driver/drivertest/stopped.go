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

package drivertest

import (
	"context"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// requestNobodyNeeds: while the backend's allocator is down, a claim asks
// for an address, and the core then binds it to one an admin made in its
// class. The request goes, so that the allocator, back, gives no address to
// a request the ledger would never record; it holds the admin's address.
func requestNobodyNeeds(t *testing.T, g *WithT, s *suite, stopper Stopper) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4)
	restart := stopper.StopAllocator(t)
	s.claim(g, ns, "web", class, v1alpha1.IPv4)
	claim := s.kit.Claim(g, ns, "web")
	requests := func() []string {
		out, err := stopper.Requests(context.Background(), s.c, claim)
		g.Expect(err).NotTo(HaveOccurred())
		return out
	}
	g.Eventually(requests, timeout, tick).Should(HaveLen(1), "the claim asks the backend")

	static := smaller(v4, 32, 9).Addr().String()
	s.kit.Make(t, g, b.Address(class+"-static", static, class))
	addrs := s.bound(g, ns, "web")
	g.Expect(ips(addrs)).To(Equal([]string{static}))
	g.Eventually(requests, timeout, tick).Should(BeEmpty(), "the request goes once the claim is bound")

	// The allocator's own start (its leader election, its first sync) comes
	// first: allow it more than a step of the driver's.
	restart()
	s.heldWithin(g, addrs, 3*timeout)
	given := func() []string {
		list := &corev1.ServiceList{}
		g.Expect(s.c.List(context.Background(), list)).To(Succeed())
		var out []string
		for _, svc := range list.Items {
			for _, in := range svc.Status.LoadBalancer.Ingress {
				if ip, err := netip.ParseAddr(in.IP); err == nil && v4.Contains(ip) && in.IP != static {
					out = append(out, svc.Namespace+"/"+svc.Name+"="+in.IP)
				}
			}
		}
		return out
	}
	g.Consistently(func() [][]string { return [][]string{requests(), given()} }, settle, tick).Should(Equal([][]string{nil, nil}),
		"no request comes back, and no other address of the class is given")
}

// offeredOutside: a class's pool keeps an address outside the class's
// ranges for as long as an IPAddress records it, and drops it once the
// class is rendered after the IPAddress went; the allocator can give it to
// a request in between (the address's hold gone first). Here the allocator
// is down and its answer is written as it would write it: an address
// outside the ranges that nothing records. The driver records nothing for
// the claim, and once back, the allocator takes the address off the
// request, since no pool has it.
func offeredOutside(t *testing.T, g *WithT, s *suite, stopper Stopper, p Placeholderer) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, smaller(v4, 32, 1))
	s.claim(g, ns, "x", class, v1alpha1.IPv4)
	s.bound(g, ns, "x")
	restart := stopper.StopAllocator(t)
	s.claim(g, ns, "y", class, v1alpha1.IPv4)
	claim := s.kit.Claim(g, ns, "y")
	request := func(g Gomega) *corev1.Service {
		list := &corev1.ServiceList{}
		g.Expect(s.c.List(context.Background(), list, client.InNamespace(p.PlaceholderNamespace()),
			client.MatchingLabels{v1alpha1.LabelClaimUID: string(claim.UID)})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1), "the claim asks the allocator")
		return &list.Items[0]
	}
	g.Eventually(func(g Gomega) { request(g) }, timeout, tick).Should(Succeed())

	outside := smaller(v4, 32, 9).Addr().String()
	ph := request(g)
	ph.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: outside}}
	g.Expect(s.c.Status().Update(context.Background(), ph)).To(Succeed())
	recorded := func() []string {
		list := &v1alpha1.IPAddressList{}
		g.Expect(s.c.List(context.Background(), list)).To(Succeed())
		var out []string
		for _, a := range list.Items {
			if a.Spec.Address == outside {
				out = append(out, a.Name)
			}
		}
		return out
	}
	g.Consistently(func() []any { return []any{s.kit.StateOfClaim(g, ns, "y")().Phase, recorded()} }, settle, tick).
		Should(Equal([]any{v1alpha1.ClaimPending, []string(nil)}), "nothing records %s", outside)

	restart()
	g.Eventually(func(g Gomega) []corev1.LoadBalancerIngress { return request(g).Status.LoadBalancer.Ingress }, 3*timeout, tick).Should(BeEmpty(),
		"the allocator takes %s off the request", outside)
	g.Expect(recorded()).To(BeEmpty())
	g.Expect(s.kit.StateOfClaim(g, ns, "y")()).To(HaveField("Phase", v1alpha1.ClaimPending))
}
