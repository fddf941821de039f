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

package core_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// emitted counts how many times events with reason were emitted about obj,
// repeats folded into a series included.
func emitted(g Gomega, obj client.Object, reason string) func() int {
	return func() int {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list)).To(Succeed())
		n := 0
		for _, e := range list.Items {
			if e.Regarding.UID == obj.GetUID() && e.Reason == reason {
				n++
				if e.Series != nil {
					n += max(int(e.Series.Count)-1, 1)
				}
			}
		}
		return n
	}
}

func TestStaticAddressesAreMatchedSmallestNameFirst(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner),
		b.Address(class+"-c", "198.18.1.3", class),
		b.Address(class+"-a", "198.18.1.1", class),
		b.Address(class+"-b", "198.18.1.2", class))
	g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	kit.Create(g, b.Claim(ns, "first", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "first"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-a"}}))
	g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressBound, Reason: v1alpha1.ReasonBound, Claim: ns + "/first"}))
	claim := kit.Claim(g, ns, "first")
	g.Expect(claim.Status.Addresses).To(Equal([]v1alpha1.ClaimedAddress{{Name: class + "-a", Address: "198.18.1.1"}}))
	g.Expect(claim.Status.ClassName).To(Equal(class))
	g.Expect(claim.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProvisioner, provisioner))
	g.Expect(claim.Finalizers).To(ContainElement(v1alpha1.FinalizerClaimProtection))
	g.Expect(kit.Address(g, class+"-a").Spec.ClaimRef.UID).To(Equal(claim.UID))

	kit.Create(g, b.Claim(ns, "second", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "second"), timeout, tick).Should(HaveField("Addresses", []string{class + "-b"}))

	// Converged objects are not written again: no status churn.
	a, c := kit.Address(g, class+"-a"), kit.Claim(g, ns, "first")
	g.Consistently(func() []string {
		return []string{kit.Address(g, class+"-a").ResourceVersion, kit.Claim(g, ns, "first").ResourceVersion}
	}, 2*time.Second, 200*time.Millisecond).Should(Equal([]string{a.ResourceVersion, c.ResourceVersion}))
}

// TestDefaultClass is the only test that makes default classes or claims
// without a class: a default class is the whole cluster's, so it runs in
// parallel only as long as no other test does either.
func TestDefaultClass(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns := kit.Namespace(t)
	one, two := testkit.Name(t)+"-one", testkit.Name(t)+"-two"

	kit.Create(g, b.Claim(ns, "none"))
	g.Eventually(func() string {
		return testkit.Reason(kit.Claim(g, ns, "none").Status.Conditions, v1alpha1.ConditionClassResolved)
	}, timeout, tick).Should(Equal(v1alpha1.ReasonNoDefaultClass))
	g.Expect(kit.StateOfClaim(g, ns, "none")()).To(Equal(testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonWaitingForClass}))
	g.Eventually(kit.EventsAbout(g, kit.Claim(g, ns, "none"), v1alpha1.ReasonNoDefaultClass), timeout, tick).Should(ConsistOf(
		ContainSubstring("no IPAddressClass is annotated " + v1alpha1.AnnotationIsDefaultClass)))

	first, second := b.Class(one, provisioner, b.Default()), b.Class(two, provisioner, b.Default())
	kit.Make(t, g, first, second)
	for _, c := range []client.Object{first, second} {
		g.Eventually(func() []string { return kit.Finalizers(g, c) }, timeout, tick).Should(ContainElement(v1alpha1.FinalizerClassProtection))
	}
	kit.Create(g, b.Claim(ns, "two-defaults"))
	g.Eventually(func() string {
		return testkit.Reason(kit.Claim(g, ns, "two-defaults").Status.Conditions, v1alpha1.ConditionClassResolved)
	}, timeout, tick).Should(Equal(v1alpha1.ReasonMultipleDefaultClasses))
	g.Eventually(kit.EventsAbout(g, kit.Claim(g, ns, "two-defaults"), v1alpha1.ReasonMultipleDefaultClasses), timeout, tick).Should(ConsistOf(
		And(ContainSubstring(one), ContainSubstring(two), ContainSubstring("refuses to guess"))))
	g.Expect(kit.StateOfClaim(g, ns, "two-defaults")()).To(Equal(testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonWaitingForClass}))

	// With one default left, the claim resolves to it and keeps it when the
	// annotation moves to the other class, even with an address waiting there.
	g.Expect(k8s.Delete(context.Background(), second)).To(Succeed())
	g.Eventually(func() string { return kit.Claim(g, ns, "two-defaults").Status.ClassName }, timeout, tick).Should(Equal(one))
	g.Expect(testkit.Reason(kit.Claim(g, ns, "two-defaults").Status.Conditions, v1alpha1.ConditionClassResolved)).To(Equal(v1alpha1.ReasonResolved))
	g.Eventually(kit.Gone(second), timeout, tick).Should(BeTrue())

	moved := b.Class(two, provisioner, b.Default())
	kit.Make(t, g, moved)
	kit.SetAnnotation(g, first, v1alpha1.AnnotationIsDefaultClass, "")
	spare := b.Address(two+"-x", "198.18.2.1", two)
	kit.Make(t, g, spare)
	g.Consistently(kit.StateOfClaim(g, ns, "two-defaults"), 2*time.Second, 100*time.Millisecond).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonWaitingForProvisioning}))
	g.Expect(kit.Claim(g, ns, "two-defaults").Status.ClassName).To(Equal(one))
}

func TestClassNotFoundUntilTheClassAppears(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Create(g, b.Claim(ns, "early", b.OfClass(class)))
	g.Eventually(func() string {
		return testkit.Reason(kit.Claim(g, ns, "early").Status.Conditions, v1alpha1.ConditionClassResolved)
	}, timeout, tick).Should(Equal(v1alpha1.ReasonClassNotFound))
	early := kit.Claim(g, ns, "early")
	g.Eventually(kit.EventsAbout(g, early, v1alpha1.ReasonClassNotFound), timeout, tick).Should(ConsistOf(
		"IPAddressClass " + class + " not found"))
	kit.SetAnnotation(g, early, "test/nudge", "1")
	g.Consistently(emitted(g, early, v1alpha1.ReasonClassNotFound), 2*time.Second, 100*time.Millisecond).Should(Equal(1),
		"a lasting problem is reported once")

	kit.Make(t, g, b.Address(class+"-a", "198.18.3.1", class), b.Class(class, provisioner))
	g.Eventually(kit.StateOfClaim(g, ns, "early"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-a"}}))
	g.Expect(testkit.Reason(kit.Claim(g, ns, "early").Status.Conditions, v1alpha1.ConditionClassResolved)).To(Equal(v1alpha1.ReasonResolved))
}

func TestPreBinding(t *testing.T) {
	shareCore(t)

	t.Run("accepted when class and family match", func(t *testing.T) {
		t.Parallel()
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, provisioner))
		kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
		g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
		kit.Make(t, g, b.Address(class+"-p", "198.18.4.1", class, b.PreBound(ns, "web")))
		g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(testkit.ClaimState{
			Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-p"}}))
		g.Expect(kit.Address(g, class+"-p").Spec.ClaimRef.UID).To(Equal(kit.Claim(g, ns, "web").UID))
		g.Eventually(kit.StateOfAddress(g, class+"-p"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	})

	refusals := []struct {
		name, why string
		claim     func(ns, class string) *v1alpha1.IPAddressClaim
		address   func(ns, class string) *v1alpha1.IPAddress
		others    func(ns, class string) []*v1alpha1.IPAddress
	}{{
		name: "class mismatch", why: "the claim's class is",
		claim: func(ns, class string) *v1alpha1.IPAddressClaim { return b.Claim(ns, "web", b.OfClass(class)) },
		address: func(ns, class string) *v1alpha1.IPAddress {
			return b.Address(class+"-p", "198.18.4.2", class+"-other", b.PreBound(ns, "web"))
		},
	}, {
		name: "family mismatch", why: "the address is IPv6 and the claim asks for IPv4",
		claim: func(ns, class string) *v1alpha1.IPAddressClaim { return b.Claim(ns, "web", b.OfClass(class)) },
		address: func(ns, class string) *v1alpha1.IPAddress {
			return b.Address(class+"-p", "2001:db8:4::2", class, b.PreBound(ns, "web"))
		},
	}, {
		name: "family already held", why: "the claim already holds an IPv4 address",
		claim: func(ns, class string) *v1alpha1.IPAddressClaim { return b.Claim(ns, "web", b.OfClass(class)) },
		others: func(ns, class string) []*v1alpha1.IPAddress {
			return []*v1alpha1.IPAddress{b.Address(class+"-a", "198.18.4.3", class)}
		},
		address: func(ns, class string) *v1alpha1.IPAddress {
			return b.Address(class+"-p", "198.18.4.4", class, b.PreBound(ns, "web"))
		},
	}}
	for _, tc := range refusals {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ns, class := kit.Namespace(t), testkit.Name(t)
			kit.Make(t, g, b.Class(class, provisioner))
			wantAddresses := []string(nil)
			if tc.others != nil {
				for _, a := range tc.others(ns, class) {
					kit.Make(t, g, a)
					g.Eventually(kit.StateOfAddress(g, a.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
					wantAddresses = append(wantAddresses, a.Name)
				}
			}
			claim := tc.claim(ns, class)
			kit.Create(g, claim)
			wantPhase, wantReason := v1alpha1.ClaimPending, v1alpha1.ReasonWaitingForProvisioning
			if wantAddresses != nil {
				wantPhase, wantReason = v1alpha1.ClaimBound, v1alpha1.ReasonBound
			}
			g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", wantPhase))

			a := tc.address(ns, class)
			kit.Make(t, g, a)
			g.Eventually(kit.EventsAbout(g, claim, v1alpha1.EventPreBindingRefused), timeout, tick).Should(
				ContainElement(ContainSubstring(tc.why)))
			g.Eventually(func() string {
				got := kit.Address(g, a.Name)
				return testkit.Reason(got.Status.Conditions, v1alpha1.ConditionBound) + ": " + fmt.Sprint(got.Status.Conditions)
			}, timeout, tick).Should(And(HavePrefix(v1alpha1.ReasonPreBindingRefused+":"), ContainSubstring(tc.why)))

			// Nothing else changes: the address keeps its uid-less claimRef,
			// stays Pending, and the claim is as it was.
			g.Consistently(func() any {
				got := kit.Address(g, a.Name)
				return []any{got.Spec.ClaimRef.UID, got.Status.Phase, kit.StateOfClaim(g, ns, "web")()}
			}, 2*time.Second, 200*time.Millisecond).Should(Equal([]any{
				v1alpha1.ClaimReference{}.UID, v1alpha1.AddressPending,
				testkit.ClaimState{Phase: wantPhase, Reason: wantReason, Addresses: wantAddresses},
			}))
		})
	}
}

func TestAddressCreatedBeforeItsClaimIsReclaimedAtOnce(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner),
		b.Address(class+"-retain", "198.18.5.1", class, b.PreBound(ns, "later")),
		b.Address(class+"-delete", "198.18.5.2", class, b.PreBound(ns, "later"), b.Reclaim(v1alpha1.ReclaimDelete)))
	g.Eventually(kit.StateOfAddress(g, class+"-retain"), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/later"}))
	g.Eventually(kit.Gone(b.Address(class+"-delete", "", "")), timeout, tick).Should(BeTrue())

	// The claim created afterwards does not get the released address back,
	// and says why.
	later := b.Claim(ns, "later", b.OfClass(class))
	kit.Create(g, later)
	g.Eventually(kit.StateOfClaim(g, ns, "later"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Eventually(kit.EventsAbout(g, later, v1alpha1.EventPreBindingRefused), timeout, tick).Should(ContainElement(ContainSubstring("is Released")))
	g.Consistently(kit.StateOfAddress(g, class+"-retain"), 2*time.Second, 200*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressReleased))
}

func TestDeletingAClaimReclaimsByPolicy(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	claimThenPreBind(t, g, b.Claim(ns, "keep", b.OfClass(class)), b.Address(class+"-retain", "198.18.6.1", class))
	claimThenPreBind(t, g, b.Claim(ns, "drop", b.OfClass(class)), b.Address(class+"-delete", "198.18.6.2", class, b.Reclaim(v1alpha1.ReclaimDelete)))
	g.Eventually(kit.StateOfClaim(g, ns, "keep"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(kit.StateOfClaim(g, ns, "drop"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	keep, drop := kit.Claim(g, ns, "keep"), kit.Claim(g, ns, "drop")

	g.Expect(k8s.Delete(context.Background(), keep)).To(Succeed())
	g.Expect(k8s.Delete(context.Background(), drop)).To(Succeed())
	g.Eventually(kit.Gone(keep), timeout, tick).Should(BeTrue())
	g.Eventually(kit.Gone(drop), timeout, tick).Should(BeTrue())
	g.Eventually(kit.StateOfAddress(g, class+"-retain"), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/keep"}))
	g.Expect(kit.Address(g, class+"-retain").Spec.ClaimRef.UID).To(Equal(keep.UID), "claimRef stays, uid and all")
	g.Eventually(kit.Gone(b.Address(class+"-delete", "", "")), timeout, tick).Should(BeTrue())
}

// TestADeletedAddressGoesAfterItsDriversTeardown: the core drops its
// protection finalizer from a deleted address only once the driver's
// teardown finalizer is gone; the two removals are patches of one list, and
// made at once one of them is refused.
func TestADeletedAddressGoesAfterItsDriversTeardown(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	a := b.Address(class+"-a", "198.18.18.1", class, b.Reclaim(v1alpha1.ReclaimDelete))
	teardown := v1alpha1.DriverTeardownFinalizer(provisioner)
	a.Finalizers = []string{teardown}
	bindByPreBinding(t, g, b.Claim(ns, "web", b.OfClass(class)), a)

	g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, "web"))).To(Succeed())
	g.Eventually(func() bool { return kit.Address(g, a.Name).DeletionTimestamp != nil }, timeout, tick).Should(BeTrue())
	g.Consistently(func() []string { return kit.Address(g, a.Name).Finalizers }, 2*time.Second, tick).
		Should(ConsistOf(teardown, v1alpha1.FinalizerAddressProtection), "the core waits for the driver's teardown")

	// The driver's teardown is done: the core lets the address go.
	g.Eventually(func() error {
		cur := kit.Address(g, a.Name)
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == teardown })
		return k8s.Update(context.Background(), cur)
	}, timeout, tick).Should(Succeed())
	g.Eventually(kit.Gone(b.Address(a.Name, "", "")), timeout, tick).Should(BeTrue())
}
