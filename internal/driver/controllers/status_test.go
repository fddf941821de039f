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

package controllers

import (
	"context"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
)

// stubBackend answers only the questions entitled asks (a Holder, so that
// its holds count); the pure functions under test never reach the rest.
type stubBackend struct{ driver.Backend }

// A slip in a capability's signature would turn it off without a word.
var (
	_ driver.Holder   = stubBackend{}
	_ driver.Releaser = stubBackend{}
)

func (stubBackend) IsHolder(svc *corev1.Service, _ *v1alpha1.IPAddress) bool {
	return svc.Namespace == "holds"
}
func (stubBackend) Unhold(context.Context, *v1alpha1.IPAddress) (bool, error) { return true, nil }
func (stubBackend) Releasing(svc *corev1.Service) bool                        { return svc.Labels["releasing"] == "true" }

func TestEntitled(t *testing.T) {
	bound := b.Address("ip-a", "10.0.0.1", "c", b.BoundTo("tenant", "web", "u1"))
	carried := bound.DeepCopy()
	carried.Status.AssociatedTo = &v1alpha1.WorkloadReference{Kind: "Service", Namespace: "tenant", Name: "a", UID: "s1"}
	svc := func(ns, name string, opts ...b.ServiceOption) *corev1.Service {
		s := b.Service(ns, name, opts...)
		s.UID = "s1"
		return s
	}
	cases := []struct {
		name        string
		svc         *corev1.Service
		a           *v1alpha1.IPAddress
		bindingLive bool
		want        bool
	}{
		{"the backend's own hold", svc("holds", "ph"), bound, true, true},
		{"a Service letting go", svc("tenant", "old", b.WithLabel("releasing", "true")), bound, false, true},
		{"the Service naming the live claim", svc("tenant", "a", b.ForClaim("web")), bound, true, true},
		{"the same, once it carries it", svc("tenant", "a", b.ForClaim("web")), carried, true, true},
		{"naming the claim but not the carrier", svc("tenant", "b", b.ForClaim("web")), carried, true, false},
		{"the carrier, its annotation just removed", svc("tenant", "a"), carried, true, true},
		{"the carrier, its binding ended", svc("tenant", "a", b.ForClaim("web")), carried, false, true},
		{"a new Service of the carrier's name", func() *corev1.Service { s := svc("tenant", "a"); s.UID = "s2"; return s }(), carried, true, false},
		{"naming the claim, binding ended", svc("tenant", "a", b.ForClaim("web")), bound, false, false},
		{"naming the claim from another namespace", svc("elsewhere", "a", b.ForClaim("web")), bound, true, false},
		{"naming nothing", svc("tenant", "thief"), bound, true, false},
		{"an unbound address", svc("tenant", "a", b.ForClaim("web")), b.Address("ip-a", "10.0.0.1", "c"), true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(entitled(stubBackend{}, tc.svc, tc.a, tc.bindingLive)).To(Equal(tc.want))
		})
	}
}

func TestDriverStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	withPhase := func(p v1alpha1.IPAddressPhase, opts ...b.AddressOption) *v1alpha1.IPAddress {
		a := b.Address("ip-a", "10.0.0.1", "c", opts...)
		a.Status.Phase = p
		return a
	}
	ref := b.BoundTo("tenant", "web", "u1")
	thief := b.Service("tenant", "thief")
	carrier := b.Service("tenant", "a")
	cases := []struct {
		name                         string
		obs                          holdObservation
		phase                        v1alpha1.IPAddressPhase
		held, associated, conflict   metav1.ConditionStatus
		heldReason, associatedReason string
	}{
		{"held, unattached", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), hold: driver.HoldState{Held: true}},
			v1alpha1.AddressBound, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonHeld, driver.ReasonNotAssociated},
		{"hold pending", holdObservation{address: withPhase(v1alpha1.AddressBound, ref)},
			v1alpha1.AddressBound, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonHoldPending, driver.ReasonNotAssociated},
		{"carried after a gap handoff", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), carrier: carrier, carried: true,
			handoff: handoff{reason: "LocalTrafficPolicy", message: "why"}},
			v1alpha1.AddressBound, metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, driver.ReasonNotHeld, driver.ReasonGapHandoff},
		{"carried after a shared handoff", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), carrier: carrier, carried: true,
			handoff: handoff{shared: true}},
			v1alpha1.AddressBound, metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, driver.ReasonNotHeld, driver.ReasonSharedHandoff},
		{"handing over, gap", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), carrier: carrier},
			v1alpha1.AddressBound, metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, driver.ReasonNotHeld, driver.ReasonHandingOver},
		{"handing over, shared: the hold still holds", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), carrier: carrier,
			handoff: handoff{shared: true}, hold: driver.HoldState{Held: true}},
			v1alpha1.AddressBound, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, driver.ReasonHeld, driver.ReasonHandingOver},
		{"a thief: Conflict", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), wrongful: []*corev1.Service{thief}},
			v1alpha1.AddressConflict, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, driver.ReasonHoldPending, driver.ReasonNotAssociated},
		{"conflict over, bound: back to Bound", holdObservation{address: withPhase(v1alpha1.AddressConflict, ref), hold: driver.HoldState{Held: true}},
			v1alpha1.AddressBound, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonHeld, driver.ReasonNotAssociated},
		{"conflict over, unbound: back to Available", holdObservation{address: withPhase(v1alpha1.AddressConflict), hold: driver.HoldState{Held: true}},
			v1alpha1.AddressAvailable, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonHeld, driver.ReasonNotAssociated},
		{"outside every range: Lost", holdObservation{address: withPhase(v1alpha1.AddressBound, ref), hold: driver.HoldState{Lost: true, Reason: driver.ReasonBackendLost}},
			v1alpha1.AddressLost, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonBackendLost, driver.ReasonNotAssociated},
		{"the core's phases are left alone", holdObservation{address: withPhase(v1alpha1.AddressReleased, ref), hold: driver.HoldState{Held: true}},
			v1alpha1.AddressReleased, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, driver.ReasonHeld, driver.ReasonNotAssociated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.obs.now = now
			st := driverStatus(tc.obs)
			g.Expect(st.Phase).To(Equal(tc.phase))
			for typ, want := range map[string]metav1.ConditionStatus{
				v1alpha1.ConditionHeld: tc.held, v1alpha1.ConditionAssociated: tc.associated, v1alpha1.ConditionConflict: tc.conflict,
			} {
				g.Expect(meta.FindStatusCondition(st.Conditions, typ).Status).To(Equal(want), typ)
			}
			g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionHeld).Reason).To(Equal(tc.heldReason))
			g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionAssociated).Reason).To(Equal(tc.associatedReason))
			if tc.phase != tc.obs.address.Status.Phase {
				g.Expect(*st.LastPhaseTransitionTime).To(Equal(now))
			}
		})
	}
}

// TestDriverStatusDropped: an address whose live carrier stops reporting it
// is Dropped only once it was carried, stays so until the carrier reports
// it again, and a new association starts afresh.
func TestDriverStatusDropped(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	carrier := b.Service("tenant", "a")
	with := func(conds ...metav1.Condition) *v1alpha1.IPAddress {
		a := b.Address("ip-a", "10.0.0.1", "c", b.BoundTo("tenant", "web", "u1"))
		a.Status.Phase = v1alpha1.AddressBound
		a.Status.AssociatedTo = &v1alpha1.WorkloadReference{Kind: "Service", Namespace: "tenant", Name: "a"}
		for _, c := range conds {
			c.LastTransitionTime = earlier
			a.Status.Conditions = append(a.Status.Conditions, c)
		}
		return a
	}
	carried := metav1.Condition{Type: v1alpha1.ConditionAssociated, Status: metav1.ConditionTrue, Reason: driver.ReasonGapHandoff}
	handingOver := metav1.Condition{Type: v1alpha1.ConditionAssociated, Status: metav1.ConditionTrue, Reason: driver.ReasonHandingOver}
	wasDropped := metav1.Condition{Type: v1alpha1.ConditionDropped, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonNoLongerReported}
	cases := []struct {
		name    string
		obs     holdObservation
		dropped bool
	}{
		{"carried, and still reported", holdObservation{address: with(carried), carrier: carrier, carried: true}, false},
		{"carried, no longer reported", holdObservation{address: with(carried), carrier: carrier}, true},
		{"carried by a shared handoff, no longer reported", holdObservation{address: with(metav1.Condition{Type: v1alpha1.ConditionAssociated,
			Status: metav1.ConditionTrue, Reason: driver.ReasonSharedHandoff}), carrier: carrier, handoff: handoff{shared: true}}, true},
		{"handing over, never reported yet", holdObservation{address: with(handingOver), carrier: carrier}, false},
		{"dropped, still not reported", holdObservation{address: with(handingOver, wasDropped), carrier: carrier}, true},
		{"dropped, reported again", holdObservation{address: with(handingOver, wasDropped), carrier: carrier, carried: true}, false},
		{"dropped, and the association ended", holdObservation{address: with(handingOver, wasDropped)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.obs.now = now
			st := driverStatus(tc.obs)
			c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionDropped)
			g.Expect(c).NotTo(BeNil())
			want := metav1.ConditionFalse
			if tc.dropped {
				want = metav1.ConditionTrue
			}
			g.Expect(c.Status).To(Equal(want))
			if tc.dropped {
				g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNoLongerReported))
				g.Expect(c.Message).To(ContainSubstring("Service tenant/a carried 10.0.0.1"))
				// The address stays Bound and associated.
				g.Expect(st.Phase).To(Equal(v1alpha1.AddressBound))
				g.Expect(meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionAssociated)).To(BeTrue())
			} else {
				g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNotDropped))
			}
		})
	}

	// Ending the association forgets the carrier: the next one is not
	// Dropped while it hands over.
	a := with(carried, wasDropped)
	dissociated(&a.Status, a.Generation, now)
	g := NewWithT(t)
	g.Expect(a.Status.AssociatedTo).To(BeNil())
	g.Expect(meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionAssociated).Reason).To(Equal(driver.ReasonNotAssociated))
	g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionDropped)).To(BeFalse())
	a.Status.AssociatedTo = &v1alpha1.WorkloadReference{Kind: "Service", Namespace: "tenant", Name: "b"}
	st := driverStatus(holdObservation{address: a, carrier: b.Service("tenant", "b"), now: now})
	g.Expect(meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionDropped)).To(BeFalse())
}

func TestSameAddressesIgnoresOrder(t *testing.T) {
	g := NewWithT(t)
	v4, v6 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("2001:db8::1")
	g.Expect(sameAddresses([]netip.Addr{v6, v4}, []netip.Addr{v4, v6})).To(BeTrue())
	g.Expect(sameAddresses([]netip.Addr{v4}, []netip.Addr{v4, v6})).To(BeFalse())
}
