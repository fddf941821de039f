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

package steadytest

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
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
)

func TestSecondServiceNamingAnAssociatedClaimIsRefused(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	mt.Kit.Create(g, b.Service(ns, "first", b.ForClaim("web")))
	g.Eventually(mt.IngressOf(g, ns, "first"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))

	second := b.Service(ns, "second", b.ForClaim("web"))
	mt.Kit.Create(g, second)
	g.Eventually(mt.Kit.EventsAbout(g, second, v1alpha1.EventAssociationRefused), mt.Timeout, mt.Tick).Should(
		ContainElement(ContainSubstring("already carried by Service " + ns + "/first")))
	g.Consistently(func() []string {
		return []string{mt.Kit.Service(g, ns, "second").Annotations["metallb.io/loadBalancerIPs"],
			mt.Kit.Address(g, addr.Name).Status.AssociatedTo.Name}
	}, 2*time.Second, mt.Tick).Should(Equal([]string{"", "first"}))
	g.Expect(mt.IngressOf(g, ns, "first")()).To(Equal([]string{addr.Address}))
	g.Expect(mt.IngressOf(g, ns, "second")()).To(BeEmpty())
}

func TestRefusedRequestsAreReported(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, _, _ := mt.Class(t, g, false)
	mt.Kit.Create(g, b.Claim(ns, "pending", b.OfClass(class), b.Named("ip-does-not-exist")))
	mt.Kit.Make(t, g, b.Class("other-"+class, "other.drivers.local.sdn.cozystack.io"), b.Claim(ns, "foreign", b.OfClass("other-"+class)))
	g.Eventually(func() string { return mt.Kit.Claim(g, ns, "foreign").Annotations[v1alpha1.AnnotationProvisioner] }, mt.Timeout, mt.Tick).
		Should(Equal("other.drivers.local.sdn.cozystack.io"))
	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	mt.BoundAddress(g, ns, "web")

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
		mt.Kit.Create(g, tc.svc)
	}
	for _, tc := range cases {
		g.Eventually(mt.Kit.EventsAbout(g, tc.svc, v1alpha1.EventAssociationRefused), mt.Timeout, mt.Tick).Should(
			ContainElement(ContainSubstring(tc.says)), tc.svc.Name)
		s := mt.Kit.Service(g, ns, tc.svc.Name)
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), tc.svc.Name)
	}
	g.Expect(mt.Kit.Service(g, ns, "pinned-elsewhere").Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", "198.51.100.200"))

	// Passes that refuse the same request again report nothing new: the
	// Event API would fold the repeats into a series, a write each.
	missing := mt.Kit.Service(g, ns, "missing")
	for i := range 3 {
		mt.Kit.SetAnnotation(g, missing, "example.com/touched", strconv.Itoa(i))
	}
	g.Consistently(refusalRepeats(g, missing), 3*time.Second, mt.Tick).Should(Equal([]int32{1}))
}

// refusalRepeats lists, for each AssociationRefused event about svc, how
// many times it was reported (its series' count, 1 without a series).
func refusalRepeats(g Gomega, svc *corev1.Service) func() []int32 {
	return func() []int32 {
		list := &eventsv1.EventList{}
		g.Expect(mt.Client.List(context.Background(), list, client.InNamespace(svc.Namespace))).To(Succeed())
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
	t.Parallel()
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	svc := b.Service(ns, "a", b.ForClaim("web"))
	mt.Kit.Create(g, svc)
	g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))

	mt.RemoveAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
	mt.HeldByPlaceholder(g, addr.Address)
	s := mt.Kit.Service(g, ns, "a")
	g.Expect(s.Annotations).NotTo(HaveKey("metallb.io/loadBalancerIPs"))
	g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy))
	g.Expect(mt.Kit.Address(g, addr.Name).Status.AssociatedTo).To(BeNil())
	g.Expect(mt.Kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(mt.Kit.EventsAbout(g, mt.Kit.Address(g, addr.Name), v1alpha1.EventDissociated)()).NotTo(BeEmpty())
	g.Expect(mt.Kit.EventsAbout(g, mt.Kit.Address(g, addr.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty(),
		"a Service letting go of the address is no thief")

	// Naming the claim again brings it back.
	mt.Kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
}

// TestAdoption follows the adoption procedure of the operating manual with a
// Service that holds the address by a hand-written pin.
func TestAdoption(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, v4, _ := mt.Class(t, g, false)
	ip := v4[:len(v4)-4] + "7" // x.y.z.7 in the class's /28
	name := "ip-" + mt.Dashed(ip)

	mt.Kit.Create(g, b.Service(ns, "legacy", b.PinnedByHand(ip)))
	g.Eventually(mt.IngressOf(g, ns, "legacy"), mt.Timeout, mt.Tick).Should(Equal([]string{ip}))
	keeps := func() {
		g.Expect(mt.IngressOf(g, ns, "legacy")()).To(Equal([]string{ip}), "the Service keeps its address throughout")
	}

	claim := b.Claim(ns, "web", b.OfClass(class), b.Named(name))
	mt.Kit.Create(g, claim)
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
	g.Consistently(mt.Placeholders(g, name), time.Second, mt.Tick).Should(BeEmpty(), "nothing is provisioned for a claim naming an address")
	keeps()

	mt.Kit.Make(t, g, b.Address(name, ip, class, b.PreBound(ns, "web")))
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	keeps()

	mt.Kit.SetAnnotation(g, mt.Kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim, "web")
	g.Eventually(func() *v1alpha1.WorkloadReference { return mt.Kit.Address(g, name).Status.AssociatedTo }, mt.Timeout, mt.Tick).Should(
		HaveField("Name", "legacy"))
	g.Eventually(mt.Kit.StateOfAddress(g, name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(mt.Kit.Service(g, ns, "legacy").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), "the pin stays hand-written")
	keeps()

	mt.RemoveAnnotation(g, mt.Kit.Service(g, ns, "legacy"), v1alpha1.AnnotationIPAddressClaim)
	g.Eventually(func() *v1alpha1.WorkloadReference { return mt.Kit.Address(g, name).Status.AssociatedTo }, mt.Timeout, mt.Tick).Should(BeNil())
	g.Consistently(func() string { return mt.Kit.Service(g, ns, "legacy").Annotations["metallb.io/loadBalancerIPs"] }, time.Second, mt.Tick).
		Should(Equal(ip), "a hand-written pin survives the annotation's removal")
	keeps()
}

func TestAHoldDeletedOutOfBandComesBack(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, _, _, addr := mt.ClaimedAndHeld(t, g)
	before := mt.Placeholders(g, addr.Name)()
	g.Expect(before).To(HaveLen(1))
	ph := mt.Kit.Service(g, mt.PlaceholderNS, before[0])
	g.Expect(mt.Client.Delete(context.Background(), ph)).To(Succeed())
	g.Eventually(func() []types.UID {
		names := mt.Placeholders(g, addr.Name)()
		uids := make([]types.UID, 0, len(names))
		for _, name := range names {
			uids = append(uids, mt.Kit.Service(g, mt.PlaceholderNS, name).UID)
		}
		return uids
	}, mt.Timeout, mt.Tick).Should(And(HaveLen(1), Not(ContainElement(ph.UID))))
	mt.HeldByPlaceholder(g, addr.Address)
}
