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

package metallb_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

func removeAnnotation(g Gomega, obj client.Object, key string) { //nolint:unparam // any annotation, though tests remove the claim's
	kit.SetAnnotation(g, obj, key, "")
}

func TestSecondServiceNamingAnAssociatedClaimIsRefused(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	kit.Create(g, b.Service(ns, "first", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "first"), timeout, tick).Should(Equal([]string{addr.Address}))

	second := b.Service(ns, "second", b.ForClaim("web"))
	kit.Create(g, second)
	g.Eventually(kit.EventsAbout(g, second, v1alpha1.EventAssociationRefused), timeout, tick).Should(
		ContainElement(ContainSubstring("already carried by Service " + ns + "/first")))
	g.Consistently(func() []string {
		return []string{kit.Service(g, ns, "second").Annotations["metallb.io/loadBalancerIPs"],
			kit.Address(g, addr.Name).Status.AssociatedTo.Name}
	}, 2*time.Second, tick).Should(Equal([]string{"", "first"}))
	g.Expect(ingressOf(g, ns, "first")()).To(Equal([]string{addr.Address}))
	g.Expect(ingressOf(g, ns, "second")()).To(BeEmpty())
}

func TestRefusedRequestsAreReported(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class, _, _ := metallbClass(t, g, false)
	kit.Create(g, b.Claim(ns, "pending", b.OfClass(class), b.Named("ip-does-not-exist")))
	kit.Create(g, b.Class("other-"+class, "other.drivers.local.sdn.cozystack.io"), b.Claim(ns, "foreign", b.OfClass("other-"+class)))
	g.Eventually(func() string { return kit.Claim(g, ns, "foreign").Annotations[v1alpha1.AnnotationProvisioner] }, timeout, tick).
		Should(Equal("other.drivers.local.sdn.cozystack.io"))
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	boundAddress(g, ns, "web")

	cases := []struct {
		svc  *corev1.Service
		says string
	}{
		{b.Service(ns, "missing", b.ForClaim("nope")), "IPAddressClaim nope not found"},
		{b.Service(ns, "unbound", b.ForClaim("pending")), "is not Bound"},
		{b.Service(ns, "foreign", b.ForClaim("foreign")), "is served by other.drivers.local.sdn.cozystack.io"},
		{b.Service(ns, "clusterip", b.ForClaim("web"), b.ClusterIPOnly()), "only a LoadBalancer Service"},
		{b.Service(ns, "pinned-elsewhere", b.ForClaim("web"), b.PinnedByHand("198.51.100.200")), "never overwrites a hand-written pin"},
	}
	for _, tc := range cases {
		kit.Create(g, tc.svc)
	}
	for _, tc := range cases {
		g.Eventually(kit.EventsAbout(g, tc.svc, v1alpha1.EventAssociationRefused), timeout, tick).Should(
			ContainElement(ContainSubstring(tc.says)), tc.svc.Name)
		s := kit.Service(g, ns, tc.svc.Name)
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), tc.svc.Name)
	}
	g.Expect(kit.Service(g, ns, "pinned-elsewhere").Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", "198.51.100.200"))

	// Passes that refuse the same request again report nothing new: the
	// Event API would fold the repeats into a series, a write each.
	missing := kit.Service(g, ns, "missing")
	for i := range 3 {
		kit.SetAnnotation(g, missing, "example.com/touched", strconv.Itoa(i))
	}
	g.Consistently(refusalRepeats(g, missing), 3*time.Second, tick).Should(Equal([]int32{1}))
}

// refusalRepeats lists, for each AssociationRefused event about svc, how
// many times it was reported (its series' count, 1 without a series).
func refusalRepeats(g Gomega, svc *corev1.Service) func() []int32 {
	return func() []int32 {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(svc.Namespace))).To(Succeed())
		var out []int32
		for _, e := range list.Items {
			if e.Regarding.UID != svc.UID || e.Reason != v1alpha1.EventAssociationRefused {
				continue
			}
			n := int32(1)
			if e.Series != nil {
				n = e.Series.Count
			}
			out = append(out, n)
		}
		return out
	}
}

func TestRemovingTheAnnotationWithdrawsThePinAndRearmsTheHold(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	svc := b.Service(ns, "a", b.ForClaim("web"))
	kit.Create(g, svc)
	g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))

	removeAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
	heldByPlaceholder(g, addr.Address)
	s := kit.Service(g, ns, "a")
	g.Expect(s.Annotations).NotTo(HaveKey("metallb.io/loadBalancerIPs"))
	g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy))
	g.Expect(kit.Address(g, addr.Name).Status.AssociatedTo).To(BeNil())
	g.Expect(kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(kit.EventsAbout(g, kit.Address(g, addr.Name), v1alpha1.EventDissociated)()).NotTo(BeEmpty())
	g.Expect(kit.EventsAbout(g, kit.Address(g, addr.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty(),
		"a Service letting go of the address is no thief")

	// Naming the claim again brings it back.
	kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
}

// TestAdoption follows the adoption procedure of the operating manual with a
// Service that holds the address by a hand-written pin.
func TestAdoption(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class, v4, _ := metallbClass(t, g, false)
	ip := v4[:len(v4)-4] + "7" // x.y.z.7 in the class's /28
	name := "ip-" + dashed(ip)

	kit.Create(g, b.Service(ns, "legacy", b.PinnedByHand(ip)))
	g.Eventually(ingressOf(g, ns, "legacy"), timeout, tick).Should(Equal([]string{ip}))
	keeps := func() {
		g.Expect(ingressOf(g, ns, "legacy")()).To(Equal([]string{ip}), "the Service keeps its address throughout")
	}

	claim := b.Claim(ns, "web", b.OfClass(class), b.Named(name))
	kit.Create(g, claim)
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
	g.Consistently(placeholders(g, name), time.Second, tick).Should(BeEmpty(), "nothing is provisioned for a claim naming an address")
	keeps()

	kit.Create(g, b.Address(name, ip, class, b.PreBound(ns, "web")))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	keeps()

	kit.SetAnnotation(g, kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim, "web")
	g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, name).Status.AssociatedTo }, timeout, tick).Should(
		HaveField("Name", "legacy"))
	g.Eventually(kit.StateOfAddress(g, name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(kit.Service(g, ns, "legacy").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), "the pin stays hand-written")
	keeps()

	removeAnnotation(g, kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim)
	g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, name).Status.AssociatedTo }, timeout, tick).Should(BeNil())
	g.Consistently(func() string { return kit.Service(g, ns, "legacy").Annotations["metallb.io/loadBalancerIPs"] }, time.Second, tick).
		Should(Equal(ip), "a hand-written pin survives the annotation's removal")
	keeps()
}

// TestTheftIsDetected: with the driver stopped, a hold placeholder goes and
// a Service pins the address; the driver reports the conflict on start, and
// recovers once the thief is gone.
func TestTheftIsDetected(t *testing.T) {
	startCore(t)
	driver := startDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)

	thief := b.Service(ns, "thief", b.PinnedByHand(addr.Address))
	steal(t, g, driver, addr, thief)
	g.Eventually(kit.StateOfAddress(g, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	a := kit.Address(g, addr.Name)
	g.Expect(testkit.Reason(a.Status.Conditions, v1alpha1.ConditionConflict)).To(Equal("HeldByAnotherService"))
	g.Eventually(kit.EventsAbout(g, a, v1alpha1.EventAddressConflict), timeout, tick).Should(ContainElement(ContainSubstring(ns + "/thief")))
	g.Eventually(kit.EventsAbout(g, kit.Service(g, ns, "thief"), v1alpha1.EventAddressConflict), timeout, tick).Should(
		ContainElement(ContainSubstring("claim " + ns + "/web")))
	g.Expect(kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound), "the binding is not lost")

	g.Expect(k8s.Delete(context.Background(), thief)).To(Succeed())
	g.Eventually(kit.StateOfAddress(g, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	heldByPlaceholder(g, addr.Address)
}

func TestPlaceholderLabelOutsideThePlaceholderNamespaceIsNoExemption(t *testing.T) {
	startCore(t)
	driver := startDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	g.Consistently(kit.StateOfAddress(g, addr.Name), time.Second, tick).Should(HaveField("Phase", v1alpha1.AddressBound),
		"the real placeholder, inside the namespace, is no conflict")

	// A forged placeholder in a tenant namespace takes the address while the
	// real hold is gone.
	forged := b.Service(ns, "forged", b.PinnedByHand(addr.Address),
		b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold), b.WithLabel(v1alpha1.LabelAddress, addr.Name))
	steal(t, g, driver, addr, forged)
	g.Eventually(kit.StateOfAddress(g, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	g.Expect(k8s.Delete(context.Background(), forged)).To(Succeed())
	g.Eventually(kit.StateOfAddress(g, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	heldByPlaceholder(g, addr.Address)
}

func TestAHoldDeletedOutOfBandComesBack(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	_, _, _, addr := claimedAndHeld(t, g)
	before := placeholders(g, addr.Name)()
	g.Expect(before).To(HaveLen(1))
	ph := kit.Service(g, placeholderNS, before[0])
	g.Expect(k8s.Delete(context.Background(), ph)).To(Succeed())
	g.Eventually(func() []types.UID {
		names := placeholders(g, addr.Name)()
		uids := make([]types.UID, 0, len(names))
		for _, name := range names {
			uids = append(uids, kit.Service(g, placeholderNS, name).UID)
		}
		return uids
	}, timeout, tick).Should(And(HaveLen(1), Not(ContainElement(ph.UID))))
	heldByPlaceholder(g, addr.Address)
}

func dashed(ip string) string {
	out := []byte(ip)
	for i, c := range out {
		if c == '.' || c == ':' {
			out[i] = '-'
		}
	}
	return string(out)
}
