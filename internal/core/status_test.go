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

package core

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

var t0 = metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))

func withPhase(p v1alpha1.IPAddressClaimPhase) b.ClaimOption {
	return func(c *v1alpha1.IPAddressClaim) { c.Status.Phase = p }
}

func TestClaimStatus(t *testing.T) {
	v4 := b.Address("ip-203-0-113-7", "203.0.113.7", "public")
	v6 := b.Address("ip-2001-db8--7", "2001:db8::7", "public")
	resolved := classResolution{consulted: true, name: "public", provisioner: "p", reason: v1alpha1.ReasonResolved, message: "ok"}
	cases := []struct {
		name       string
		claim      *v1alpha1.IPAddressClaim
		bound      map[v1alpha1.IPFamily]*v1alpha1.IPAddress
		lost       map[v1alpha1.IPFamily]*v1alpha1.IPAddress
		class      classResolution
		waits      map[v1alpha1.IPFamily]familyWait
		wantPhase  v1alpha1.IPAddressClaimPhase
		wantReason string
		wantAddrs  []v1alpha1.ClaimedAddress
		wantClass  string
	}{{
		name: "every family bound", claim: b.Claim("ns", "c"),
		bound: map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: v4}, class: resolved,
		wantPhase: v1alpha1.ClaimBound, wantReason: v1alpha1.ReasonBound, wantClass: "public",
		wantAddrs: []v1alpha1.ClaimedAddress{{Name: "ip-203-0-113-7", Address: "203.0.113.7"}},
	}, {
		name: "dual with both, sorted by name", claim: b.Claim("ns", "c", b.Family(v1alpha1.Dual)),
		bound:     map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: v4, v1alpha1.IPv6: v6},
		wantPhase: v1alpha1.ClaimBound, wantReason: v1alpha1.ReasonBound,
		wantAddrs: []v1alpha1.ClaimedAddress{{Name: "ip-2001-db8--7", Address: "2001:db8::7"}, {Name: "ip-203-0-113-7", Address: "203.0.113.7"}},
	}, {
		name: "dual missing IPv6 waits with that family's reason", claim: b.Claim("ns", "c", b.Family(v1alpha1.Dual)),
		bound: map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: v4}, class: resolved,
		waits:     map[v1alpha1.IPFamily]familyWait{v1alpha1.IPv6: {v1alpha1.ReasonWaitingForProvisioning, "waiting"}},
		wantPhase: v1alpha1.ClaimPending, wantReason: v1alpha1.ReasonWaitingForProvisioning, wantClass: "public",
		wantAddrs: []v1alpha1.ClaimedAddress{{Name: "ip-203-0-113-7", Address: "203.0.113.7"}},
	}, {
		name: "unresolved class", claim: b.Claim("ns", "c"),
		class:     classResolution{consulted: true, reason: v1alpha1.ReasonNoDefaultClass, message: "none"},
		waits:     map[v1alpha1.IPFamily]familyWait{v1alpha1.IPv4: {v1alpha1.ReasonWaitingForClass, "w"}},
		wantPhase: v1alpha1.ClaimPending, wantReason: v1alpha1.ReasonWaitingForClass,
	}, {
		name: "was Bound, address gone: Lost", claim: b.Claim("ns", "c", withPhase(v1alpha1.ClaimBound)),
		wantPhase: v1alpha1.ClaimLost, wantReason: v1alpha1.ReasonAddressLost,
	}, {
		name: "address Lost: Lost even before ever Bound", claim: b.Claim("ns", "c"),
		lost:      map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: v4},
		wantPhase: v1alpha1.ClaimLost, wantReason: v1alpha1.ReasonAddressLost,
	}, {
		name: "Lost comes back to Bound", claim: b.Claim("ns", "c", withPhase(v1alpha1.ClaimLost)),
		bound:     map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: v4},
		wantPhase: v1alpha1.ClaimBound, wantReason: v1alpha1.ReasonBound,
		wantAddrs: []v1alpha1.ClaimedAddress{{Name: "ip-203-0-113-7", Address: "203.0.113.7"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			st := claimStatus(claimObservation{claim: tc.claim, bound: tc.bound, lost: tc.lost, class: tc.class, waits: tc.waits, now: t0})
			g.Expect(st.Phase).To(Equal(tc.wantPhase))
			g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionBound).Reason).To(Equal(tc.wantReason))
			g.Expect(st.Addresses).To(Equal(tc.wantAddrs))
			g.Expect(st.ClassName).To(Equal(tc.wantClass))
			if tc.class.consulted {
				g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionClassResolved).Reason).To(Equal(tc.class.reason))
			} else {
				g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionClassResolved)).To(BeNil())
			}
		})
	}
}

func TestClaimStatusKeepsTransitionTimeAndStickyClass(t *testing.T) {
	g := NewWithT(t)
	claim := b.Claim("ns", "c")
	claim.Generation = 3
	first := claimStatus(claimObservation{claim: claim, class: classResolution{consulted: true, name: "public", reason: v1alpha1.ReasonResolved},
		waits: map[v1alpha1.IPFamily]familyWait{v1alpha1.IPv4: {v1alpha1.ReasonWaitingForProvisioning, "a"}}, now: t0})
	claim.Status = first
	later := metav1.NewTime(t0.Add(time.Hour))
	// Same status, new message: the transition time stays; not consulting the
	// class keeps the resolved one.
	second := claimStatus(claimObservation{claim: claim,
		waits: map[v1alpha1.IPFamily]familyWait{v1alpha1.IPv4: {v1alpha1.ReasonWaitingForProvisioning, "b"}}, now: later})
	cond := meta.FindStatusCondition(second.Conditions, v1alpha1.ConditionBound)
	g.Expect(cond.LastTransitionTime).To(Equal(t0))
	g.Expect(cond.Message).To(Equal("b"))
	g.Expect(cond.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(second.ClassName).To(Equal("public"))
	g.Expect(meta.FindStatusCondition(second.Conditions, v1alpha1.ConditionClassResolved).Reason).To(Equal(v1alpha1.ReasonResolved))
}

func TestDecideAddress(t *testing.T) {
	bound := func(a *v1alpha1.IPAddress) { a.Status.Phase = v1alpha1.AddressBound }
	released := func(a *v1alpha1.IPAddress) { a.Status.Phase = v1alpha1.AddressReleased }
	conflict := func(a *v1alpha1.IPAddress) { a.Status.Phase = v1alpha1.AddressConflict }
	lost := func(a *v1alpha1.IPAddress) { a.Status.Phase = v1alpha1.AddressLost }
	ref := b.PreBound("ns", "web")
	cases := []struct {
		name    string
		obs     addressObservation
		want    addressDecision
		message string
	}{
		{"invalid wins over everything", addressObservation{address: b.Address("a", "x", "c", ref), invalid: "bad", claim: claimLive},
			addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonInvalidAddress}, "bad"},
		{"duplicate", addressObservation{address: b.Address("a", "10.0.0.1", "c"), duplicateOf: "b"},
			addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonDuplicate}, "IPAddress b already has"},
		{"conflict is the driver's", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref, conflict), claim: claimMissing},
			addressDecision{skip: true}, ""},
		{"lost is the driver's", addressObservation{address: b.Address("a", "10.0.0.1", "c", lost)},
			addressDecision{skip: true}, ""},
		{"no claimRef is Available", addressObservation{address: b.Address("a", "10.0.0.1", "c")},
			addressDecision{phase: v1alpha1.AddressAvailable, reason: v1alpha1.ReasonAvailable}, "available"},
		{"claim missing reclaims", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref, bound), claim: claimMissing},
			addressDecision{reclaim: true, phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased}, "claim ns/web is gone"},
		{"claim re-created reclaims", addressObservation{address: b.Address("a", "10.0.0.1", "c", b.BoundTo("ns", "web", "old")),
			claim: claimUIDMismatch, liveUID: "new"},
			addressDecision{reclaim: true, phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased}, "re-created (uid new)"},
		{"pre-binding waits", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref), claim: claimPreBinding},
			addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonWaitingForClaim}, "yet to accept"},
		{"pre-binding refused", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref), claim: claimPreBinding, refusal: "nope"},
			addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonPreBindingRefused}, "refuses this pre-binding: nope"},
		{"released pre-binding stays released", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref, released), claim: claimPreBinding},
			addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased}, "not handed back"},
		{"claim deleting keeps Bound", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref, bound), claim: claimDeleting},
			addressDecision{phase: v1alpha1.AddressBound, bound: true, reason: v1alpha1.ReasonClaimDeleting}, "being deleted"},
		{"claim deleting after the reclaim keeps Released", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref, released), claim: claimDeleting},
			addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased}, "retained"},
		{"live claim binds", addressObservation{address: b.Address("a", "10.0.0.1", "c", ref), claim: claimLive},
			addressDecision{phase: v1alpha1.AddressBound, bound: true, reason: v1alpha1.ReasonBound}, "Bound to claim ns/web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := decideAddress(tc.obs)
			g.Expect(got.message).To(ContainSubstring(tc.message))
			got.message = ""
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestAddressStatusStampsPhaseTransitions(t *testing.T) {
	g := NewWithT(t)
	a := b.Address("a", "10.0.0.1", "c")
	a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionHeld, Status: metav1.ConditionTrue, Reason: "Held"}}
	st := addressStatus(a, addressDecision{phase: v1alpha1.AddressAvailable, reason: v1alpha1.ReasonAvailable}, t0)
	g.Expect(st.Phase).To(Equal(v1alpha1.AddressAvailable))
	g.Expect(*st.LastPhaseTransitionTime).To(Equal(t0))
	g.Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionHeld)).NotTo(BeNil(), "the driver's conditions are kept")
	a.Status = st
	again := addressStatus(a, addressDecision{phase: v1alpha1.AddressAvailable, reason: v1alpha1.ReasonAvailable}, metav1.NewTime(t0.Add(time.Hour)))
	g.Expect(again).To(Equal(st), "an unchanged decision changes nothing")
}

// releasedThenHandedBack is an address released at releasedAt whose phase
// went through Conflict and came back to Released at back.
func releasedThenHandedBack(releasedAt, back time.Time) *v1alpha1.IPAddress {
	a := b.Address("a", "10.0.0.1", "c")
	a.Status.Phase = v1alpha1.AddressReleased
	a.Status.LastPhaseTransitionTime = &metav1.Time{Time: back}
	a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReleased, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReleased, LastTransitionTime: metav1.Time{Time: releasedAt}}}
	return a
}

func TestAddressStatusKeepsTheReleasedClock(t *testing.T) {
	g := NewWithT(t)
	released := addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased, message: "claim ns/web is gone"}
	a := b.Address("a", "10.0.0.1", "c", b.BoundTo("ns", "web", "uid-1"))
	a.Status.Phase = v1alpha1.AddressBound
	a.Status = addressStatus(a, released, t0)
	g.Expect(meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReleased)).To(And(
		HaveField("Status", metav1.ConditionTrue), HaveField("LastTransitionTime", t0)))

	// The driver sets Conflict, then hands the phase back as Bound.
	a.Status.Phase, a.Status.LastPhaseTransitionTime = v1alpha1.AddressBound, &metav1.Time{Time: t0.Add(time.Hour)}
	later := metav1.NewTime(t0.Add(2 * time.Hour))
	a.Status = addressStatus(a, released, later)
	g.Expect(*a.Status.LastPhaseTransitionTime).To(Equal(later))
	g.Expect(releasedSince(a)).To(HaveValue(Equal(t0)), "the clock runs from the release")

	recycled := addressStatus(a, addressDecision{phase: v1alpha1.AddressAvailable, reason: v1alpha1.ReasonAvailable}, later)
	g.Expect(meta.FindStatusCondition(recycled.Conditions, v1alpha1.ConditionReleased)).To(BeNil())

	// Released before the condition existed: the phase's time is the clock.
	old := b.Address("a", "10.0.0.1", "c")
	old.Status.Phase, old.Status.LastPhaseTransitionTime = v1alpha1.AddressReleased, &t0
	old.Status = addressStatus(old, released, later)
	g.Expect(releasedSince(old)).To(HaveValue(Equal(t0)))
}

func TestReleaseDue(t *testing.T) {
	released := func(at time.Time, opts ...b.AddressOption) *v1alpha1.IPAddress {
		a := b.Address("a", "10.0.0.1", "c", opts...)
		a.Status.Phase = v1alpha1.AddressReleased
		a.Status.LastPhaseTransitionTime = &metav1.Time{Time: at}
		return a
	}
	delay := &metav1.Duration{Duration: time.Hour}
	now := t0.Time
	cases := []struct {
		name      string
		a         *v1alpha1.IPAddress
		delay     *metav1.Duration
		wantDue   bool
		wantAfter time.Duration
	}{
		{"no delay", released(now.Add(-48 * time.Hour)), nil, false, 0},
		{"not yet", released(now.Add(-20 * time.Minute)), delay, false, 40 * time.Minute},
		{"exactly due", released(now.Add(-time.Hour)), delay, true, 0},
		{"overdue", released(now.Add(-3 * time.Hour)), delay, true, 0},
		{"held pauses the return, not the clock", released(now.Add(-3*time.Hour), b.Held()), delay, false, 0},
		{"zero delay is due at once", released(now), &metav1.Duration{}, true, 0},
		{"not Released", b.Address("a", "10.0.0.1", "c"), delay, false, 0},
		{"a conflict in between keeps the clock", releasedThenHandedBack(now.Add(-70*time.Minute), now.Add(-10*time.Minute)), delay, true, 0},
		{"counted from the release, not the hand-back", releasedThenHandedBack(now.Add(-50*time.Minute), now.Add(-time.Minute)), delay, false, 10 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			due, after := releaseDue(tc.a, tc.delay, now)
			g.Expect(due).To(Equal(tc.wantDue))
			g.Expect(after).To(Equal(tc.wantAfter))
		})
	}
}

func TestPreBindingRefusal(t *testing.T) {
	claim := b.Claim("ns", "web")
	held := map[v1alpha1.IPFamily]*v1alpha1.IPAddress{v1alpha1.IPv4: b.Address("x", "10.0.0.9", "public")}
	cases := []struct {
		name  string
		claim *v1alpha1.IPAddressClaim
		a     *v1alpha1.IPAddress
		bound map[v1alpha1.IPFamily]*v1alpha1.IPAddress
		dup   string
		class string
		want  string
	}{
		{"fits", claim, b.Address("a", "10.0.0.1", "public"), nil, "", "public", ""},
		{"fits before the class is known", claim, b.Address("a", "10.0.0.1", "public"), nil, "", "", ""},
		{"class mismatch", claim, b.Address("a", "10.0.0.1", "private"), nil, "", "public", "of class private and the claim's class is public"},
		{"family mismatch", claim, b.Address("a", "2001:db8::1", "public"), nil, "", "public", "is IPv6 and the claim asks for IPv4"},
		{"family held", claim, b.Address("a", "10.0.0.1", "public"), held, "", "public", "already holds an IPv4 address, x"},
		{"duplicate", claim, b.Address("a", "10.0.0.1", "public"), nil, "older", "public", "IPAddress older already has"},
		{"names another address", b.Claim("ns", "web", b.Named("other")), b.Address("a", "10.0.0.1", "public"), nil, "", "public", "names IPAddress other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := preBindingRefusal(tc.claim, tc.class, tc.a, tc.bound, tc.dup)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
			} else {
				g.Expect(got).To(ContainSubstring(tc.want))
			}
		})
	}
}

func TestClaimWarnings(t *testing.T) {
	resolved := func(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: v1alpha1.ConditionClassResolved, Status: status, Reason: reason, Message: msg}
	}
	status := func(phase v1alpha1.IPAddressClaimPhase, conds ...metav1.Condition) v1alpha1.IPAddressClaimStatus {
		return v1alpha1.IPAddressClaimStatus{Phase: phase, Conditions: conds}
	}
	notFound := resolved(metav1.ConditionFalse, v1alpha1.ReasonClassNotFound, "IPAddressClass gold not found")
	lostCond := metav1.Condition{Type: v1alpha1.ConditionBound, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonAddressLost,
		Message: "the IPv4 address ip-10-0-0-1 (10.0.0.1) is Lost"}
	cases := []struct {
		name    string
		old, st v1alpha1.IPAddressClaimStatus
		want    []claimWarning
	}{
		{"first pass, class not found", status(""), status(v1alpha1.ClaimPending, notFound),
			[]claimWarning{{v1alpha1.ReasonClassNotFound, "ResolveClass", "IPAddressClass gold not found"}}},
		{"the same problem again: no event", status(v1alpha1.ClaimPending, notFound), status(v1alpha1.ClaimPending, notFound), nil},
		{"another problem", status(v1alpha1.ClaimPending, notFound),
			status(v1alpha1.ClaimPending, resolved(metav1.ConditionFalse, v1alpha1.ReasonMultipleDefaultClasses, "a, b")),
			[]claimWarning{{v1alpha1.ReasonMultipleDefaultClasses, "ResolveClass", "a, b"}}},
		{"resolved: no event", status(v1alpha1.ClaimPending, notFound),
			status(v1alpha1.ClaimPending, resolved(metav1.ConditionTrue, v1alpha1.ReasonResolved, "ok")), nil},
		{"Bound goes Lost", status(v1alpha1.ClaimBound), status(v1alpha1.ClaimLost, lostCond),
			[]claimWarning{{v1alpha1.EventClaimLost, "Bind", "Lost: " + lostCond.Message}}},
		{"still Lost: no event", status(v1alpha1.ClaimLost, lostCond), status(v1alpha1.ClaimLost, lostCond), nil},
		{"back to Bound: no warning", status(v1alpha1.ClaimLost, lostCond), status(v1alpha1.ClaimBound), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(claimWarnings(tc.old, tc.st)).To(Equal(tc.want))
		})
	}
}
