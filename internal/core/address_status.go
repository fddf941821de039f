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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// claimState is what an address pass found at the other end of claimRef.
type claimState int

const (
	claimNone        claimState = iota // no claimRef
	claimMissing                       // no claim of that name
	claimUIDMismatch                   // a claim of that name with another UID
	claimPreBinding                    // the claim exists; claimRef.uid is empty
	claimDeleting                      // the claim is being deleted
	claimLive                          // the claim exists with the same UID
)

// addressObservation is everything an address pass saw, for the decision.
type addressObservation struct {
	address *v1alpha1.IPAddress
	// invalid says why spec.address is unusable; empty when it is fine.
	invalid string
	// duplicateOf names an older IPAddress with the same spec.address.
	duplicateOf string
	claim       claimState
	// liveUID is the UID of the claim found, for claimUIDMismatch.
	liveUID string
	// refusal says why the claim cannot accept a pre-binding; empty means
	// the claim has yet to look at it.
	refusal string
}

// addressDecision is the core's verdict on an address.
type addressDecision struct {
	// skip: the driver owns the phase (Conflict or Lost); write nothing.
	skip bool
	// reclaim: the claim is gone; apply the reclaim policy now. message
	// then says why.
	reclaim bool
	phase   v1alpha1.IPAddressPhase
	bound   bool
	reason  string
	message string
}

// decideAddress implements the address pass of the contract, in its order.
func decideAddress(o addressObservation) addressDecision {
	a := o.address
	switch {
	case o.invalid != "":
		return addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonInvalidAddress, message: o.invalid}
	case o.duplicateOf != "":
		return addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonDuplicate,
			message: fmt.Sprintf("IPAddress %s already has address %s; this one is never matched or held", o.duplicateOf, a.Spec.Address)}
	case a.Status.Phase == v1alpha1.AddressConflict || a.Status.Phase == v1alpha1.AddressLost:
		return addressDecision{skip: true}
	}
	ref := a.Spec.ClaimRef
	switch o.claim {
	case claimNone:
		return addressDecision{phase: v1alpha1.AddressAvailable, reason: v1alpha1.ReasonAvailable,
			message: "Not bound; available for matching"}
	case claimMissing, claimUIDMismatch:
		why := fmt.Sprintf("claim %s is gone", ref.Key())
		if o.claim == claimUIDMismatch {
			why = fmt.Sprintf("claim %s was re-created (uid %s); this address was bound to uid %s", ref.Key(), o.liveUID, ref.UID)
		}
		return addressDecision{reclaim: true, phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased, message: why}
	case claimPreBinding:
		if a.Status.Phase == v1alpha1.AddressReleased {
			return addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased,
				message: fmt.Sprintf("Released while claim %s did not exist; a released address is not handed back: clear spec.claimRef to recycle it", ref.Key())}
		}
		if o.refusal != "" {
			return addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonPreBindingRefused,
				message: fmt.Sprintf("claim %s refuses this pre-binding: %s", ref.Key(), o.refusal)}
		}
		return addressDecision{phase: v1alpha1.AddressPending, reason: v1alpha1.ReasonWaitingForClaim,
			message: fmt.Sprintf("Pre-bound to claim %s, which has yet to accept it", ref.Key())}
	case claimDeleting:
		if a.Status.Phase == v1alpha1.AddressReleased {
			// The claim's reclaim flow got here first; its finalizer is going.
			return addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased,
				message: fmt.Sprintf("claim %s was deleted; retained by reclaimPolicy Retain", ref.Key())}
		}
		phase := a.Status.Phase
		if phase == "" {
			phase = v1alpha1.AddressPending
		}
		return addressDecision{phase: phase, bound: phase == v1alpha1.AddressBound, reason: v1alpha1.ReasonClaimDeleting,
			message: fmt.Sprintf("Claim %s is being deleted; reclaimPolicy %s applies next", ref.Key(), a.Spec.ReclaimPolicy)}
	default:
		return addressDecision{phase: v1alpha1.AddressBound, bound: true, reason: v1alpha1.ReasonBound,
			message: fmt.Sprintf("Bound to claim %s", ref.Key())}
	}
}

// addressStatus applies a decision to the address's status: the phase (with
// its transition time when it changes) and the core's Bound condition. The
// driver's fields and conditions are carried over untouched.
func addressStatus(a *v1alpha1.IPAddress, d addressDecision, now metav1.Time) v1alpha1.IPAddressStatus {
	st := *a.Status.DeepCopy()
	releasedSince := now
	if st.Phase == v1alpha1.AddressReleased && st.LastPhaseTransitionTime != nil {
		// Released before the Released condition existed: keep its clock.
		releasedSince = *st.LastPhaseTransitionTime
	}
	if st.Phase != d.phase {
		st.Phase = d.phase
		st.LastPhaseTransitionTime = &now
	}
	cond := metav1.Condition{Type: v1alpha1.ConditionBound, Status: metav1.ConditionFalse,
		Reason: d.reason, Message: d.message, ObservedGeneration: a.Generation, LastTransitionTime: now}
	if d.bound {
		cond.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	setReleased(&st, d, a.Generation, releasedSince)
	return st
}

// setReleased keeps the Released condition, whose transition time is the
// releaseDelay's clock: set when the address becomes Released, kept while a
// driver-owned phase (Conflict, Lost) comes and goes, removed once the core
// moves the address on.
func setReleased(st *v1alpha1.IPAddressStatus, d addressDecision, gen int64, since metav1.Time) {
	if d.phase != v1alpha1.AddressReleased {
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionReleased)
		return
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReleased, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonReleased, Message: d.message, ObservedGeneration: gen, LastTransitionTime: since})
}

// releasedSince is when the address was released: the Released condition's
// transition time, or, on an address released before that condition
// existed, the phase's.
func releasedSince(a *v1alpha1.IPAddress) *metav1.Time {
	if c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionReleased); c != nil && c.Status == metav1.ConditionTrue {
		return &c.LastTransitionTime
	}
	return a.Status.LastPhaseTransitionTime
}

// releaseDue says whether a Released address returns to Available now under
// the class's releaseDelay, counted from when it was released, and otherwise
// how long until it does (zero when only a change to the object can make it
// due: no delay, or held).
func releaseDue(a *v1alpha1.IPAddress, delay *metav1.Duration, now time.Time) (bool, time.Duration) {
	if a.Status.Phase != v1alpha1.AddressReleased || delay == nil || a.Held() {
		return false, 0
	}
	since := releasedSince(a)
	if since == nil {
		return false, delay.Duration
	}
	left := delay.Duration - now.Sub(since.Time)
	if left <= 0 {
		return true, 0
	}
	return false, left
}
