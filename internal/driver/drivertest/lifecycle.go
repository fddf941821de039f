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
	"maps"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// retarget: a claim waiting on a full class is moved to another class; the
// new class provisions it, and its request to the old class is withdrawn:
// once the old class's only address frees, a new claim of it gets it.
func retarget(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	full := s.class(t, g, v1alpha1.ReclaimDelete, smaller(v4, 32, 1))
	other := smaller(v4, 29, 1)
	s.claim(g, ns, "first", full, v1alpha1.IPv4)
	first := s.bound(g, ns, "first")
	s.claim(g, ns, "web", full, v1alpha1.IPv4)
	g.Eventually(s.kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Consistently(s.kit.StateOfClaim(g, ns, "web"), time.Second, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))

	moved := s.class(t, g, v1alpha1.ReclaimDelete, other)
	g.Eventually(func() error {
		c := s.kit.Claim(g, ns, "web")
		c.Spec.ClassName = moved
		return s.c.Update(context.Background(), c)
	}, timeout, tick).Should(Succeed())
	addrs := s.bound(g, ns, "web")
	ip := netip.MustParseAddr(addrs[0].Address)
	g.Expect(other.Contains(ip)).To(BeTrue(), "%s is provisioned from the new class's %s", ip, other)
	g.Expect(s.kit.Address(g, addrs[0].Name).Spec.ClassName).To(Equal(moved))
	s.held(g, addrs)

	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "first"))).To(Succeed())
	g.Eventually(s.kit.Gone(b.Address(first[0].Name, "", "")), timeout, tick).Should(BeTrue())
	s.claim(g, ns, "third", full, v1alpha1.IPv4)
	g.Expect(ips(s.bound(g, ns, "third"))).To(Equal(ips(first)), "no request of the moved claim took the old class's address")
}

// pendingDeleted: a claim waiting on a full class is deleted; its request
// to the class is withdrawn with it: once the class's only address frees,
// a new claim gets it, and the backend keeps nothing for the deleted one.
func pendingDeleted(t *testing.T, g *WithT, s *suite) {
	ns, full, first := s.boundInFew(t, g, 1, "first")
	s.claim(g, ns, "web", full, v1alpha1.IPv4)
	g.Eventually(s.kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Consistently(s.kit.StateOfClaim(g, ns, "web"), time.Second, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))

	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
	g.Eventually(s.kit.Gone(b.Claim(ns, "web")), timeout, tick).Should(BeTrue())
	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "first"))).To(Succeed())
	g.Eventually(s.kit.Gone(b.Address(first[0].Name, "", "")), timeout, tick).Should(BeTrue())
	s.claim(g, ns, "third", full, v1alpha1.IPv4)
	g.Expect(ips(s.bound(g, ns, "third"))).To(Equal(ips(first)), "no request of the deleted claim took the class's address")
}

// adoption follows the adoption procedure of the operating manual: a
// Service pinned by hand to an address of a class keeps it throughout
// while an admin records the address for a claim naming it and the Service
// names the claim (the pin stays the admin's), and after it stops naming
// the claim (the hand-written pin survives).
func adoption(t *testing.T, g *WithT, s *suite, hand HandPinner) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4)
	ip := smaller(v4, 32, 7).Addr()
	name := testkit.Name(t)

	legacy := b.Service(ns, "legacy")
	hand.PinByHand(legacy, class, ip)
	handWritten := maps.Clone(legacy.Annotations)
	s.kit.Create(g, legacy)
	keeps := func(g Gomega) {
		svc := s.kit.Service(g, ns, "legacy")
		g.Expect(svc.Status.LoadBalancer.Ingress).To(ConsistOf(HaveField("IP", ip.String())), "the Service keeps its address")
		for k, v := range handWritten {
			g.Expect(svc.Annotations).To(HaveKeyWithValue(k, v), "the pin stays the admin's")
		}
	}
	g.Eventually(keeps, timeout, tick).Should(Succeed())

	s.kit.Create(g, b.Claim(ns, "web", b.OfClass(class), b.Named(name)))
	claim := s.kit.Claim(g, ns, "web")
	g.Eventually(s.kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
	g.Consistently(func() []string { return s.addressesOf(g, claim) }, time.Second, tick).Should(BeEmpty(),
		"nothing is provisioned for a claim naming an address")
	keeps(g)

	s.kit.Make(t, g, b.Address(name, ip.String(), class, b.PreBound(ns, "web")))
	g.Eventually(s.kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	keeps(g)

	s.kit.SetAnnotation(g, s.kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim, "web")
	g.Eventually(s.associatedTo(g, name), timeout, tick).Should(HaveField("Name", "legacy"))
	g.Eventually(s.kit.StateOfAddress(g, name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(s.kit.Service(g, ns, "legacy").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), "the driver writes no pin of its own")
	keeps(g)

	s.kit.SetAnnotation(g, s.kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim, "")
	g.Eventually(s.associatedTo(g, name), timeout, tick).Should(BeNil())
	g.Consistently(keeps, time.Second, tick).Should(Succeed(), "a hand-written pin survives the annotation's removal")
}

// statusAfterCore: the driver holds a new address at once, but writes its
// conditions only once the core has written the address's phase (both
// writing a new address's status at the same moment, one of the two writes
// would be refused).
func statusAfterCore(t *testing.T, g *WithT, s *suite) {
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4)
	leftovers := func() ([]string, error) { return s.h.Leftovers(context.Background(), s.c, class) }
	before, err := leftovers()
	g.Expect(err).NotTo(HaveOccurred())
	restart := s.stopCore(t)
	name := testkit.Name(t)
	s.kit.Make(t, g, b.Address(name, smaller(v4, 32, 9).Addr().String(), class))
	g.Eventually(func() int {
		now, err := leftovers()
		g.Expect(err).NotTo(HaveOccurred())
		return len(now)
	}, timeout, tick).Should(BeNumerically(">", len(before)), "the backend holds the address")
	g.Consistently(func() []metav1.Condition { return s.kit.Address(g, name).Status.Conditions }, settle, tick).
		Should(BeEmpty(), "no status before the core's")

	restart()
	g.Eventually(s.kit.StateOfAddress(g, name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	g.Eventually(s.condition(g, name, v1alpha1.ConditionHeld), timeout, tick).Should(HaveField("Status", metav1.ConditionTrue))
}

// deleteMakesNoHold: under Delete, a claim being deleted ends its
// Service's association, and the backend does not hold the address again,
// since the core is about to delete it. The core is down meanwhile, so that
// the window in which a hold could be made stays open. Once the core is
// back the address goes, and the backend frees it.
func deleteMakesNoHold(t *testing.T, g *WithT, s *suite) {
	ns, class, addrs := s.boundInFew(t, g, 3, "web")
	s.held(g, addrs)
	s.kit.Create(g, b.Service(ns, "svc", b.ForClaim("web")))
	s.carried(g, ns, "svc", addrs)

	restart := s.stopCore(t)
	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty(), "the Service lets go")
	g.Eventually(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionHeld), timeout, tick).Should(Equal(driver.ReasonReclaiming))
	g.Consistently(s.kit.Holders(g, addrs[0].Address), settle, tick).Should(BeEmpty(),
		"no hold is made for an address its claim's deletion is about to delete")

	restart()
	g.Eventually(s.kit.Gone(b.Address(addrs[0].Name, "", "")), timeout, tick).Should(BeTrue())
	g.Eventually(s.kit.Gone(b.Claim(ns, "web")), timeout, tick).Should(BeTrue())
	s.claim(g, ns, "next", class, v1alpha1.IPv4)
	g.Expect(ips(s.bound(g, ns, "next"))).To(Equal(ips(addrs)), "the backend freed the address")
}
