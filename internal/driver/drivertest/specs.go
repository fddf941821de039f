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
	"fmt"
	"math"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

// specs is the contract, in the order it runs, one spec at a time: some
// stop the core or the driver for a while, and the crash specs, which kill
// drivers again and again, come last.
func specs(h Harness) []spec {
	var out []spec
	for _, f := range []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6, v1alpha1.Dual} {
		out = append(out, spec{"provision/" + string(f), func(t *testing.T, g *WithT, s *suite) { provision(t, g, s, f) }})
	}
	out = append(out,
		spec{"family not served", familyNotServed},
		spec{"exhaustion", exhaustion},
		spec{"release/Retain", releaseRetain},
		spec{"release/Delete", releaseDelete},
		spec{"capacity and use", capacityAndUse},
		spec{"capacity/the class's metrics start at zero and go with it", classMetrics},
		spec{"capacity/a class moved to other ranges keeps its addresses", shrinking},
	)
	for _, f := range []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.Dual} {
		out = append(out, spec{"association/" + string(f), func(t *testing.T, g *WithT, s *suite) { association(t, g, s, f) }})
	}
	out = append(out,
		spec{"association/a pin written as its claim went is withdrawn", func(t *testing.T, g *WithT, s *suite) {
			pinOutlivingItsAssociation(t, g, s, true)
		}},
		spec{"association/a pin written as the Service stopped naming its claim is withdrawn", func(t *testing.T, g *WithT, s *suite) {
			pinOutlivingItsAssociation(t, g, s, false)
		}},
	)
	hand, _ := h.(HandPinner)
	out = append(out,
		spec{"refusal/every request the driver cannot honour", func(t *testing.T, g *WithT, s *suite) { refusals(t, g, s, hand) }},
		spec{"re-targeting/a Pending claim moves to another class", retarget},
		spec{"re-targeting/a Pending claim deleted withdraws its request", pendingDeleted},
		spec{"conflict/another load balancer reports the address", conflictOtherLoadBalancer},
		spec{"conflict/a theft while the driver is down", theftWhileDown},
		spec{"duplicate/an admin's copy of a recorded address", duplicate},
	)
	if p, ok := h.(Placeholderer); ok {
		out = append(out,
			spec{"placeholders/one whose claim lists its address is kept", func(t *testing.T, g *WithT, s *suite) {
				placeholderWhoseClaimListsItsAddress(t, g, s, p)
			}},
			spec{"placeholders/one assigned its claim's address is kept", func(t *testing.T, g *WithT, s *suite) {
				placeholderAssignedItsClaimsAddress(t, g, s, p)
			}},
		)
	}
	if stopper, ok := h.(Stopper); ok {
		out = append(out, spec{"re-targeting/a request made while the allocator is down goes once the claim is bound elsewhere",
			func(t *testing.T, g *WithT, s *suite) { requestNobodyNeeds(t, g, s, stopper) }})
		if p, ok := h.(Placeholderer); ok {
			out = append(out, spec{"provisioning/an address offered outside the class's ranges is not recorded",
				func(t *testing.T, g *WithT, s *suite) { offeredOutside(t, g, s, stopper, p) }})
		}
	}
	if hand != nil {
		out = append(out,
			spec{"conflict/hand pin on a held address", func(t *testing.T, g *WithT, s *suite) { conflictHandPin(t, g, s, hand) }},
			spec{"adoption/a Service pinned by hand keeps its address", func(t *testing.T, g *WithT, s *suite) { adoption(t, g, s, hand) }},
		)
	}
	if holder, ok := h.(ServiceHolder); ok {
		out = append(out,
			spec{"handoff/shared, the addresses never unreported/IPv6", func(t *testing.T, g *WithT, s *suite) { sharedHandoff(t, g, s, v1alpha1.IPv6) }},
			spec{"handoff/shared, the addresses never unreported/Dual", func(t *testing.T, g *WithT, s *suite) { sharedHandoff(t, g, s, v1alpha1.Dual) }},
			spec{"handoff/gap, where the backend cannot share", func(t *testing.T, g *WithT, s *suite) { gapHandoff(t, g, s, holder) }},
			spec{"handoff/a hold deleted behind the driver's back comes back", holdComesBack},
			spec{"handoff/gap forced, then the upgrade to shared", func(t *testing.T, g *WithT, s *suite) { upgradeToShared(t, g, s, holder) }},
			spec{"handoff/a carrier deleted while the driver is down", carrierDeletedWhileDown},
			spec{"handoff/a former tenant keeps nothing", func(t *testing.T, g *WithT, s *suite) { formerTenant(t, g, s, holder) }},
		)
		if hand != nil {
			out = append(out,
				spec{"handoff/a contender pinned by hand never gets a shared address", func(t *testing.T, g *WithT, s *suite) {
					contenderShared(t, g, s, hand)
				}},
				spec{"handoff/a contender under the gap handoff takes nothing for good", func(t *testing.T, g *WithT, s *suite) {
					contenderGap(t, g, s, hand, holder)
				}},
			)
		}
	}
	out = append(out,
		spec{"core down/the driver writes an address's status after the core", statusAfterCore},
		spec{"core down/a claim deleted under Delete makes no hold on the way out", deleteMakesNoHold},
		spec{"teardown", teardown},
	)
	modes := []crashMode{{name: "crash", start: h.StartDriver}}
	if holder, ok := h.(ServiceHolder); ok {
		modes = append(modes, crashMode{name: "crash, gap handoff", start: holder.StartGapDriver, gap: true})
	}
	for _, m := range modes {
		out = append(out,
			spec{m.name + "/the writes of each step, counted", func(t *testing.T, g *WithT, s *suite) { crash(t, g, s, m, -1) }},
			spec{m.name + "/driver killed after each write of each step", func(t *testing.T, _ *WithT, s *suite) {
				most := 0
				for _, step := range crashSteps {
					most = max(most, s.stepWrites[m.name+"/"+step])
				}
				if most == 0 {
					t.Fatalf("the counting spec of %s counted no writes", m.name)
				}
				for n := range most {
					t.Run(fmt.Sprintf("after write %d", n), func(t *testing.T) { crash(t, NewWithT(t), s, m, n) })
				}
			}})
	}
	return out
}

// provision: a claim gets one address of each family it asks for, from its
// class's ranges, recorded as an IPAddress bound to it and held by the
// backend.
func provision(t *testing.T, g *WithT, s *suite, family v1alpha1.IPFamily) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4, v6)
	s.claim(g, ns, "web", class, family)
	addrs := s.bound(g, ns, "web")
	claim := s.kit.Claim(g, ns, "web")
	g.Expect(addrs).To(HaveLen(len(family.Families())))
	got := make([]v1alpha1.IPFamily, 0, len(addrs))
	for _, ca := range addrs {
		a := s.kit.Address(g, ca.Name)
		ip, err := a.IP()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ip.String()).To(Equal(ca.Address))
		g.Expect(v4.Contains(ip) || v6.Contains(ip)).To(BeTrue(), "%s lies in the class's ranges %s, %s", ip, v4, v6)
		got = append(got, a.Family())
		g.Expect(a.Spec.ClassName).To(Equal(class))
		g.Expect(a.Spec.ClaimRef).To(Equal(&v1alpha1.ClaimReference{Namespace: ns, Name: "web", UID: claim.UID}))
		g.Expect(a.Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimRetain))
		g.Expect(a.Spec.Source.FromClass).NotTo(BeNil(), "provisioned from the class")
		g.Expect(a.Finalizers).To(ContainElement(v1alpha1.DriverTeardownFinalizer(s.h.Provisioner())))
		g.Eventually(s.kit.StateOfAddress(g, ca.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	}
	g.Expect(got).To(ConsistOf(family.Families()))
	s.held(g, addrs)
	g.Consistently(s.kit.StateOfClaim(g, ns, "web"), settle, tick).Should(HaveField("Addresses", HaveLen(len(addrs))),
		"no further address for a Bound claim")
}

// familyNotServed: the driver reports the families a class's ranges
// serve, and a claim for another family waits, with that reason, and
// reserves nothing in the backend.
func familyNotServed(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimDelete, v4)
	g.Eventually(func() []v1alpha1.IPFamily {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(s.c.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		return c.Status.Families
	}, timeout, tick).Should(Equal([]v1alpha1.IPFamily{v1alpha1.IPv4}))
	s.claim(g, ns, "v6", class, v1alpha1.IPv6)
	g.Eventually(s.kit.StateOfClaim(g, ns, "v6"), timeout, tick).Should(Equal(
		testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonFamilyNotServed}))
	claim := s.kit.Claim(g, ns, "v6")
	reservations := func() []string {
		list := &corev1.ServiceList{}
		g.Expect(s.c.List(context.Background(), list, client.MatchingLabels{v1alpha1.LabelClaimUID: string(claim.UID)})).To(Succeed())
		names := []string{}
		for _, svc := range list.Items {
			names = append(names, svc.Namespace+"/"+svc.Name)
		}
		return append(names, s.addressesOf(g, claim)...)
	}
	g.Consistently(reservations, settle, tick).Should(BeEmpty())
}

// exhaustion: a claim a full class cannot serve waits, Pending with a
// reason naming the provisioner, and is served by itself once an address
// frees.
func exhaustion(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	two := smaller(v4, 31, 1)
	class := s.class(t, g, v1alpha1.ReclaimDelete, two)
	names := []string{"c0", "c1", "c2"}
	for _, n := range names {
		s.claim(g, ns, n, class, v1alpha1.IPv4)
	}
	phases := func() []v1alpha1.IPAddressClaimPhase {
		out := make([]v1alpha1.IPAddressClaimPhase, 0, len(names))
		for _, n := range names {
			out = append(out, s.kit.Claim(g, ns, n).Status.Phase)
		}
		return out
	}
	twoBound := ConsistOf(v1alpha1.ClaimBound, v1alpha1.ClaimBound, v1alpha1.ClaimPending)
	g.Eventually(phases, timeout, tick).Should(twoBound)
	g.Consistently(phases, settle, tick).Should(twoBound)
	var pending, freed string
	var freedIP string
	for _, n := range names {
		c := s.kit.Claim(g, ns, n)
		if c.Status.Phase == v1alpha1.ClaimPending {
			pending = n
			cond := testkit.Condition(c.Status.Conditions, v1alpha1.ConditionBound)
			g.Expect(cond.Reason).To(Equal(v1alpha1.ReasonWaitingForProvisioning))
			g.Expect(cond.Message).To(ContainSubstring(s.h.Provisioner()))
		} else {
			freed, freedIP = n, c.Status.Addresses[0].Address
		}
	}
	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, freed))).To(Succeed())
	g.Expect(ips(s.bound(g, ns, pending))).To(Equal([]string{freedIP}), "the freed address serves the waiting claim")
}

// releaseRetain: deleting a claim of a Retain class leaves its address
// Released, still held by the backend and taken from the Service that
// carried it.
func releaseRetain(t *testing.T, g *WithT, s *suite) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	s.kit.Create(g, b.Service(ns, "svc", b.ForClaim("web")))
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(Equal(ips(addrs)))

	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/web"}))
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty(), "the Service lets go of a released address")
	g.Eventually(s.associatedTo(g, addrs[0].Name), timeout, tick).Should(BeNil())
	s.held(g, addrs)
	g.Consistently(s.kit.StateOfAddress(g, addrs[0].Name), settle, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
	g.Expect(s.kit.Service(g, ns, "svc").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy))
	s.noConflictReported(g, addrs)
}

// releaseDelete: deleting a claim of a Delete class deletes its address,
// and the backend frees it: the next claim of the one-address class gets
// it.
func releaseDelete(t *testing.T, g *WithT, s *suite) {
	ns, class, addrs := s.boundInFew(t, g, 3, "first")
	s.held(g, addrs)

	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "first"))).To(Succeed())
	g.Eventually(s.kit.Gone(b.Address(addrs[0].Name, "", "")), timeout, tick).Should(BeTrue())
	s.claim(g, ns, "second", class, v1alpha1.IPv4)
	g.Expect(ips(s.bound(g, ns, "second"))).To(Equal(ips(addrs)), "the backend freed the address")
}

// association: a Service naming a Bound claim reports exactly the claim's
// addresses, and a plain Service beside it none of them. Once it stops
// naming the claim, it reports none, keeps no pin of the driver's, and the
// backend holds them again; naming the claim again brings them back. Once
// the Service goes, the backend holds them, the claim still Bound, and
// another Service naming the claim gets the same addresses.
func association(t *testing.T, g *WithT, s *suite, family v1alpha1.IPFamily) {
	ns, addrs := s.heldClaim(t, g, family)
	var shape []b.ServiceOption
	if family == v1alpha1.Dual {
		shape = append(shape, b.DualStack())
	}
	svc := b.Service(ns, "svc", append([]b.ServiceOption{b.ForClaim("web")}, shape...)...)
	s.kit.Create(g, svc, b.Service(ns, "plain", shape...))
	s.carried(g, ns, "svc", addrs)
	for _, a := range addrs {
		g.Eventually(s.associatedTo(g, a.Name), timeout, tick).Should(And(
			HaveField("Kind", "Service"), HaveField("Namespace", ns), HaveField("Name", "svc"), HaveField("UID", svc.UID)))
		g.Eventually(s.condition(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(HaveField("Status", metav1.ConditionTrue))
	}
	g.Expect(s.kit.Service(g, ns, "svc").Annotations).To(HaveKey(v1alpha1.AnnotationPinnedBy), "the driver marks its pin")
	g.Consistently(func(g Gomega) {
		g.Expect(s.kit.Ingress(g, ns, "svc")()).To(ConsistOf(ips(addrs)), "the carrier keeps the addresses")
		g.Expect(s.kit.Ingress(g, ns, "plain")()).To(BeEmpty(), "a plain Service never gets them")
	}, settle, tick).Should(Succeed())

	s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "")
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty())
	s.letGo(g, ns, addrs)
	g.Expect(s.kit.Service(g, ns, "svc").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), "the driver's pin goes")
	for _, a := range addrs {
		g.Expect(s.kit.EventsAbout(g, s.kit.Address(g, a.Name), v1alpha1.EventDissociated)()).NotTo(BeEmpty(), "%s reports the dissociation", a.Address)
	}
	s.noConflictReported(g, addrs)

	s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	s.carried(g, ns, "svc", addrs)

	g.Expect(s.c.Delete(context.Background(), s.kit.Service(g, ns, "svc"))).To(Succeed())
	g.Eventually(s.kit.Gone(svc), timeout, tick).Should(BeTrue())
	s.letGo(g, ns, addrs)
	s.kit.Create(g, b.Service(ns, "next", append([]b.ServiceOption{b.ForClaim("web")}, shape...)...))
	s.carried(g, ns, "next", addrs)
	for _, a := range addrs {
		g.Eventually(s.associatedTo(g, a.Name), timeout, tick).Should(HaveField("Name", "next"))
	}
	s.noConflictReported(g, addrs)
}

// carried waits until Service name reports exactly addrs.
func (s *suite) carried(g *WithT, ns, name string, addrs []v1alpha1.ClaimedAddress) {
	g.Eventually(s.kit.Ingress(g, ns, name), timeout, tick).Should(ConsistOf(ips(addrs)), "Service %s/%s carries the claim's addresses", ns, name)
}

// letGo waits until no Service is associated with addrs and the backend
// holds them, and checks that claim "web" of ns is still Bound: a Service
// letting go never releases.
func (s *suite) letGo(g *WithT, ns string, addrs []v1alpha1.ClaimedAddress) {
	for _, a := range addrs {
		g.Eventually(s.associatedTo(g, a.Name), timeout, tick).Should(BeNil())
	}
	s.held(g, addrs)
	g.Expect(s.kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound), "a Service letting go never releases")
}

// pinOutlivingItsAssociation: the Service's pass and the address's run at
// once. As the claim goes, the address's pass may end the association
// before the Service's pass, which began associating just before, writes
// its pin: the dissociation finds no pin to withdraw, and the pin written
// after it is recorded nowhere (a chaos run of the Cilium driver left a
// Service so, reporting the address of a deleted claim). The spec makes
// that state with the driver down (the Service pinned, the association
// cleared as the address's pass clears it, then the claim deleted, or the
// Service's annotation removed) and starts the driver: the pin and the
// carrier finalizer go, and the Service reports nothing; a claim that
// stays keeps its binding and its hold.
func pinOutlivingItsAssociation(t *testing.T, g *WithT, s *suite, claimDeleted bool) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	svc := b.Service(ns, "svc", b.ForClaim("web"))
	s.kit.Create(g, svc)
	s.carried(g, ns, "svc", addrs)
	g.Eventually(s.associatedTo(g, addrs[0].Name), timeout, tick).ShouldNot(BeNil())
	g.Expect(s.kit.Service(g, ns, "svc").Annotations).To(HaveKey(v1alpha1.AnnotationPinnedBy))

	restart := s.stopDriver(t)
	cleared := []byte(`{"status":{"associatedTo":null}}`)
	g.Expect(s.c.Status().Patch(context.Background(), s.kit.Address(g, addrs[0].Name),
		client.RawPatch(types.MergePatchType, cleared))).To(Succeed())
	claim := s.kit.Claim(g, ns, "web")
	if claimDeleted {
		g.Expect(s.c.Delete(context.Background(), claim)).To(Succeed())
		g.Eventually(s.kit.Gone(claim), timeout, tick).Should(BeTrue())
	} else {
		s.kit.SetAnnotation(g, s.kit.Service(g, ns, "svc"), v1alpha1.AnnotationIPAddressClaim, "")
	}
	restart()

	g.Eventually(func() map[string]string { return s.kit.Service(g, ns, "svc").Annotations }, timeout, tick).
		ShouldNot(HaveKey(v1alpha1.AnnotationPinnedBy), "the driver's pin goes")
	g.Eventually(func() []string { return s.kit.Service(g, ns, "svc").Finalizers }, timeout, tick).
		Should(BeEmpty(), "the carrier finalizer goes")
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty(), "the Service reports nothing")
	if !claimDeleted {
		s.letGo(g, ns, addrs)
	}
}

// conflictOtherLoadBalancer: a Service that another load balancer gives a
// bound address turns the address Conflict, with a Warning on each side;
// the claim stays Bound, and once the Service goes the address is Bound and
// held again.
func conflictOtherLoadBalancer(t *testing.T, g *WithT, s *suite) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)

	thief := b.Service(ns, "thief", b.OfLoadBalancerClass("example.com/another-load-balancer"))
	s.kit.Create(g, thief)
	thief.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: addrs[0].Address}}
	g.Expect(s.c.Status().Update(context.Background(), thief)).To(Succeed())

	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	g.Expect(s.condition(g, addrs[0].Name, v1alpha1.ConditionConflict)()).To(And(
		HaveField("Status", metav1.ConditionTrue), HaveField("Reason", driver.ReasonHeldByOther)))
	g.Eventually(s.kit.EventsAbout(g, s.kit.Address(g, addrs[0].Name), v1alpha1.EventAddressConflict), timeout, tick).Should(
		ContainElement(ContainSubstring(ns + "/thief")))
	g.Eventually(s.kit.EventsAbout(g, thief, v1alpha1.EventAddressConflict), timeout, tick).Should(
		ContainElement(ContainSubstring("claim " + ns + "/web")))
	g.Expect(s.kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound), "a conflict takes no binding away")

	g.Expect(s.c.Delete(context.Background(), thief)).To(Succeed())
	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	s.held(g, addrs)
}

// theftWhileDown: a Service that another load balancer gives a bound
// address while the driver is down is found at the driver's start, though
// it carries the labels of the backend's holds (in a tenant's namespace,
// labels are no proof of anything); once it goes, the address is Bound and
// held again.
func theftWhileDown(t *testing.T, g *WithT, s *suite) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	restart := s.stopDriver(t)
	thief := b.Service(ns, "thief", b.OfLoadBalancerClass("example.com/another-load-balancer"),
		b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold), b.WithLabel(v1alpha1.LabelAddress, addrs[0].Name))
	s.kit.Create(g, thief)
	thief.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: addrs[0].Address}}
	g.Expect(s.c.Status().Update(context.Background(), thief)).To(Succeed())
	restart()

	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	g.Eventually(s.kit.EventsAbout(g, s.kit.Address(g, addrs[0].Name), v1alpha1.EventAddressConflict), timeout, tick).Should(
		ContainElement(ContainSubstring(ns + "/thief")))
	g.Expect(s.kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound), "the binding is not lost")

	g.Expect(s.c.Delete(context.Background(), thief)).To(Succeed())
	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	s.held(g, addrs)
}

// conflictHandPin: a Service an admin pins by hand to an address the
// backend holds for a claim never gets it, and the backend says why on the
// Service; the address stays Bound.
func conflictHandPin(t *testing.T, g *WithT, s *suite, p HandPinner) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)

	svc := b.Service(ns, "pinned")
	p.PinByHand(svc, s.kit.Address(g, addrs[0].Name).Spec.ClassName, netip.MustParseAddr(addrs[0].Address))
	s.kit.Create(g, svc)
	g.Eventually(s.refusedOn(g, svc), timeout, tick).ShouldNot(BeEmpty(), "the backend reports the refusal")
	g.Consistently(s.kit.Ingress(g, ns, "pinned"), settle, tick).ShouldNot(ContainElement(addrs[0].Address))
	g.Expect(s.kit.StateOfAddress(g, addrs[0].Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	s.held(g, addrs)
}

// teardown: once its claims, addresses and classes are deleted, the
// backend keeps nothing, and no Service keeps a pin the driver wrote.
func teardown(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	deleting := s.class(t, g, v1alpha1.ReclaimDelete, smaller(v4, 29, 0), smaller(v6, 125, 0))
	retaining := s.class(t, g, v1alpha1.ReclaimRetain, smaller(v4, 29, 1), smaller(v6, 125, 1))
	s.claim(g, ns, "carried", deleting, v1alpha1.IPv4)
	s.claim(g, ns, "dual", deleting, v1alpha1.Dual)
	s.claim(g, ns, "kept", retaining, v1alpha1.Dual)
	carried := s.bound(g, ns, "carried")
	deleted, kept := append(carried, s.bound(g, ns, "dual")...), s.bound(g, ns, "kept")
	s.held(g, append(deleted, kept...))
	s.kit.Create(g, b.Service(ns, "svc", b.ForClaim("carried")))
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(Equal(ips(carried)))

	for _, n := range []string{"carried", "dual", "kept"} {
		g.Expect(s.c.Delete(context.Background(), b.Claim(ns, n))).To(Succeed())
	}
	for _, a := range deleted {
		g.Eventually(s.kit.Gone(b.Address(a.Name, "", "")), timeout, tick).Should(BeTrue(), "Delete: %s goes", a.Name)
	}
	// Retain: an admin deletes the Released addresses.
	for _, a := range kept {
		g.Eventually(s.kit.StateOfAddress(g, a.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
		g.Expect(s.c.Delete(context.Background(), b.Address(a.Name, "", ""))).To(Succeed())
		g.Eventually(s.kit.Gone(b.Address(a.Name, "", "")), timeout, tick).Should(BeTrue(), "Retain: %s goes once deleted", a.Name)
	}
	g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty())
	g.Expect(s.kit.Service(g, ns, "svc").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy))
	for _, class := range []string{deleting, retaining} {
		g.Expect(s.c.Delete(context.Background(), b.Class(class, ""))).To(Succeed())
		g.Eventually(s.kit.Gone(b.Class(class, "")), timeout, tick).Should(BeTrue())
		g.Eventually(func() ([]string, error) { return s.h.Leftovers(context.Background(), s.c, class) }, timeout, tick).
			Should(BeEmpty(), "nothing of class %s is left in the backend", class)
	}
}

// crashSteps are the steps of a claim's life a crash spec kills the
// driver in.
var crashSteps = []string{"provisioning", "association", "dissociation", "release"}

// crashMode is the driver a crash spec kills and starts again: the
// harness's own, or, for a ServiceHolder, one forced to the gap handoff.
type crashMode struct {
	name  string
	start func(*testing.T, *rest.Config) *inprocess.Manager
	gap   bool
}

// crash: the driver is killed right after its n-th write of each step of a
// claim's life (crashSteps), n = 0 being before its first, and a new one
// started: each step completes, with no duplicate address and nothing left
// behind. Writes the driver makes on its own (a Prober's probes, events,
// leases) are not counted. The kill falls between two writes of the step,
// or before its only one: where the step took n writes or fewer when the
// suite counted them (n < 0, the counting spec of the mode), the driver is
// killed before its last write. The specs run n from 0 to the most writes a
// step took, so that every write of every step is the last one some driver
// makes. For n up to 2 the spec fails if the driver does not make that
// many, and the next driver proves the step was cut short by writing to
// finish it; beyond, a step's count moves by a write or two between runs,
// so a kill may fall just after it, and the step must only complete. With a
// ServiceHolder, some Service reports each address throughout the
// association and the dissociation of a shared handoff, crash or not.
func crash(t *testing.T, g *WithT, s *suite, m crashMode, n int) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimDelete, v4, v6)
	// The class's status (its counts, its Rendered condition) is written
	// when the driver gets to it, no step's write.
	probes := []string{classWrites}
	if p, ok := s.h.(Prober); ok {
		probes = append(probes, p.ProbeWrites()...)
	}
	killedDuring := func(step string, act func(), done func()) {
		s.driver.Stop()
		after := math.MaxInt // counting
		if n >= 0 {
			g.Expect(s.stepWrites).To(HaveKeyWithValue(m.name+"/"+step, BeNumerically(">", 0)), "the counting spec counted the writes of %s", step)
			after = min(n, s.stepWrites[m.name+"/"+step]-1)
		}
		k := testkit.NewKiller(after)
		k.Ignore(probes...)
		owner := t // a driver that counts goes on as the suite's
		if n < 0 {
			owner = s.t
		}
		dying := m.start(owner, k.Config(s.cfg))
		k.Arm()
		act()
		if n < 0 {
			s.driver = dying
			done()
			s.stepWrites[m.name+"/"+step] = len(k.Written())
			t.Logf("%s: %d writes %v", step, len(k.Written()), k.Written())
			g.Expect(k.Written()).NotTo(BeEmpty(), "%s: the driver writes", step)
			return
		}
		// Kills after writes 0 to 2 must fall inside the step: every step
		// makes at least three. Later ones land where this run's writes put
		// them: a step's count moves by a write or two between runs (a
		// conflict retried, an address's status written once or twice).
		strict := n <= 2
		select {
		case <-k.Dead():
		case <-time.After(timeout):
			if strict {
				g.Expect(k.Written()).To(HaveLen(after), "%s: the driver makes the %d writes it made before", step, after)
			}
		}
		dying.Stop()
		t.Logf("%s: killed after %v", step, k.Written())
		next := testkit.NewKiller(math.MaxInt)
		next.Ignore(probes...)
		next.Arm()
		s.driver = m.start(s.t, next.Config(s.cfg))
		done()
		t.Logf("%s: the next driver wrote %v", step, next.Written())
		if strict {
			g.Expect(next.Written()).NotTo(BeEmpty(), "%s: the kill after write %d fell inside the step, so the next driver wrote to finish it", step, after)
		}
	}

	var addrs []v1alpha1.ClaimedAddress
	killedDuring("provisioning", func() { s.claim(g, ns, "web", class, v1alpha1.Dual) }, func() {
		addrs = s.bound(g, ns, "web")
		s.held(g, addrs)
	})
	claim := s.kit.Claim(g, ns, "web")
	g.Consistently(func() int { return len(s.addressesOf(g, claim)) }, settle, tick).Should(Equal(2), "one address of each family, no more")

	var watcher *testkit.IPWatcher
	if _, ok := s.h.(ServiceHolder); ok && !m.gap {
		watcher = testkit.WatchIPs(t, g, s.cfg, ips(addrs)...)
	}
	svc := b.Service(ns, "svc", b.ForClaim("web"), b.DualStack())
	killedDuring("association", func() { s.kit.Create(g, svc) }, func() {
		g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(ConsistOf(ips(addrs)))
		for _, a := range addrs {
			g.Eventually(s.associatedTo(g, a.Name), timeout, tick).ShouldNot(BeNil())
		}
	})

	killedDuring("dissociation", func() { s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "") }, func() {
		g.Eventually(s.kit.Ingress(g, ns, "svc"), timeout, tick).Should(BeEmpty())
		g.Eventually(func() map[string]string { return s.kit.Service(g, ns, "svc").Annotations }, timeout, tick).
			ShouldNot(HaveKey(v1alpha1.AnnotationPinnedBy))
		g.Eventually(func() []string { return s.kit.Service(g, ns, "svc").Finalizers }, timeout, tick).
			Should(BeEmpty(), "the driver's carrier finalizer goes with the association")
		s.held(g, addrs)
		for _, a := range addrs {
			g.Eventually(s.associatedTo(g, a.Name), timeout, tick).Should(BeNil())
		}
	})
	s.noConflictReported(g, addrs)
	if watcher != nil {
		for _, a := range addrs {
			g.Eventually(s.holderOf(g, ns, a.Address), timeout, tick).ShouldNot(BeEmpty(), "the hold has %s back", a.Address)
		}
		for ip, gaps := range watcher.Gaps() {
			g.Expect(gaps).To(BeEmpty(), "a shared handoff never leaves %s unreported, crash or not", ip)
		}
	}

	killedDuring("release", func() { g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed()) }, func() {
		for _, a := range addrs {
			g.Eventually(s.kit.Gone(b.Address(a.Name, "", "")), timeout, tick).Should(BeTrue())
		}
	})
	g.Expect(s.c.Delete(context.Background(), b.Class(class, ""))).To(Succeed())
	g.Eventually(func() ([]string, error) { return s.h.Leftovers(context.Background(), s.c, class) }, timeout, tick).Should(BeEmpty())
}

// addressesOf lists the IPAddresses bound to claim.
func (s *suite) addressesOf(g *WithT, claim *v1alpha1.IPAddressClaim) []string {
	list := &v1alpha1.IPAddressList{}
	g.Expect(s.c.List(context.Background(), list)).To(Succeed())
	var out []string
	for _, a := range list.Items {
		if ref := a.Spec.ClaimRef; ref != nil && ref.UID == claim.UID {
			out = append(out, a.Name)
		}
	}
	return out
}

// classWrites is the path part of every write to an IPAddressClass.
var classWrites = "/apis/" + v1alpha1.GroupVersion.String() + "/ipaddressclasses/"

// refusedOn lists what the backend says on svc against its request: its
// Warning events, and the messages of the conditions of its status that
// are False (LB-IPAM's way).
func (s *suite) refusedOn(g *WithT, svc *corev1.Service) func() []string {
	warnings := s.kit.WarningsAbout(g, svc)
	return func() []string {
		out := warnings()
		for _, c := range s.kit.Service(g, svc.Namespace, svc.Name).Status.Conditions {
			if c.Status == metav1.ConditionFalse {
				out = append(out, c.Type+": "+c.Message)
			}
		}
		return out
	}
}
