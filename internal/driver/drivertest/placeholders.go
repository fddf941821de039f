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
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/ipaddr"
	b "github.com/cozystack/address-controller/test/builder"
)

// The driver's cache can show a claim Bound to the address an allocation
// placeholder reserved before it shows the IPAddress, or the IPAddress
// before the pin the driver wrote on the placeholder first (two watches,
// two orders). Either way the placeholder is the address's hold to be:
// deleting it as an orphan leaves the address free in the allocator until
// a new hold gets it, and another claim's request may take it meanwhile
// (58 of 10,000 claims in one MetalLB benchmark run). These specs build
// what such a cache showed, with the core and the driver down.

// placeholderWhoseClaimListsItsAddress: the claim is Bound to an address
// the driver cannot see, which its placeholder names. The placeholder is
// kept.
func placeholderWhoseClaimListsItsAddress(t *testing.T, g *WithT, s *suite, p Placeholderer) {
	v4, _ := s.h.Ranges()
	claim, addr := s.boundWithCoreStopped(t, g, v4, smaller(v4, 32, 5).Addr())
	addr.Finalizers = nil
	g.Expect(s.c.Update(context.Background(), addr)).To(Succeed())
	g.Expect(s.c.Delete(context.Background(), addr)).To(Succeed())
	g.Eventually(s.kit.Gone(addr), timeout, tick).Should(BeTrue())

	ph := allocationPlaceholder(p, claim, claim.ClassName())
	ph.Annotations[v1alpha1.AnnotationAddressName] = addr.Name
	// An orphan beside it, whose claim never existed: once it goes, the
	// new driver has looked at the allocation placeholders.
	orphan := allocationPlaceholder(p, b.Claim(claim.Namespace, "ghost", b.OfClass(claim.ClassName())), claim.ClassName())
	s.kit.Make(t, g, ph, orphan)

	s.driver = s.h.StartDriver(s.t, s.cfg)
	g.Eventually(s.kit.Gone(orphan), timeout, tick).Should(BeTrue(), "the new driver deletes an orphan")
	g.Consistently(s.kit.Gone(ph), 5*time.Second, tick).Should(BeFalse(), "the hold to be is kept")
}

// placeholderAssignedItsClaimsAddress: the allocator gave a placeholder
// that names no IPAddress the class's only address, to which the claim is
// Bound. The placeholder is pinned to it, for the hold to adopt, and kept.
func placeholderAssignedItsClaimsAddress(t *testing.T, g *WithT, s *suite, p Placeholderer) {
	v4, _ := s.h.Ranges()
	only := smaller(v4, 32, 5)
	claim, addr := s.boundWithCoreStopped(t, g, only, only.Addr())

	ph := allocationPlaceholder(p, claim, claim.ClassName())
	s.kit.Make(t, g, ph)
	g.Eventually(s.kit.Ingress(g, ph.Namespace, ph.Name), timeout, tick).Should(Equal([]string{only.Addr().String()}),
		"the allocator gives the class's only address, the claim's, to the placeholder")

	s.driver = s.h.StartDriver(s.t, s.cfg)
	g.Eventually(func() string {
		return s.kit.Service(g, ph.Namespace, ph.Name).Annotations[v1alpha1.AnnotationAddressName]
	}, timeout, tick).
		Should(Equal(addr.Name), "pinned to the claim's address, for its hold to adopt it")
	g.Consistently(s.kit.Gone(ph), 5*time.Second, tick).Should(BeFalse(), "the hold to be is kept")
}

// boundWithCoreStopped makes a class over addresses, then, with the driver
// stopped, a claim of it Bound to ip by a pre-bound IPAddress, and stops the
// core: no request or hold exists, and nothing changes the binding while
// the spec starts the driver alone. The core comes back when the spec
// ends; the driver is the spec's to start.
func (s *suite) boundWithCoreStopped(t *testing.T, g *WithT, addresses netip.Prefix, ip netip.Addr) (*v1alpha1.IPAddressClaim, *v1alpha1.IPAddress) {
	ns := s.kit.Namespace(t)
	class := s.class(t, g, v1alpha1.ReclaimRetain, addresses)
	s.stopDriver(t)
	s.claim(g, ns, "web", class, v1alpha1.IPv4)
	g.Eventually(func() string { return s.kit.Claim(g, ns, "web").Annotations[v1alpha1.AnnotationProvisioner] }, timeout, tick).
		Should(Equal(s.h.Provisioner()))
	addr := b.Address(ipaddr.ObjectName(ip), ip.String(), class, b.PreBound(ns, "web"))
	s.kit.Create(g, addr)
	s.bound(g, ns, "web")
	s.stopCore(t)
	claim := s.kit.Claim(g, ns, "web")
	g.Expect(claim.Status.Addresses).To(ConsistOf(HaveField("Name", addr.Name)), "the claim lists the address")
	return claim, s.kit.Address(g, addr.Name)
}

// allocationPlaceholder is the IPv4 allocation placeholder the driver makes
// for claim of class, built by hand.
func allocationPlaceholder(p Placeholderer, claim *v1alpha1.IPAddressClaim, class string) *corev1.Service {
	if claim.UID == "" {
		claim.UID = uuid.NewUUID()
	}
	set := placeholder.Set{Namespace: p.PlaceholderNamespace()}
	ph := set.NewAllocation(claim, class, v1alpha1.IPv4)
	p.MarkAllocation(ph, class)
	return ph
}
