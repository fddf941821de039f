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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// Messages of the driver's conditions that two places write.
const (
	msgNotAssociated = "Reserved; attached to no workload"
	msgNotDropped    = "No associated Service has dropped the address"
)

// holdObservation is what an address pass of the driver saw.
type holdObservation struct {
	address *v1alpha1.IPAddress
	// carrier is the live associated Service, if any.
	carrier *corev1.Service
	// carried: the carrier's load balancer reports the address.
	carried bool
	// handoff is how the carrier takes the address.
	handoff handoff
	hold    driver.HoldState
	// wrongful are Services holding the address without entitlement.
	wrongful []*corev1.Service
	now      metav1.Time
}

// driverStatus derives the driver's part of an address's status: its
// conditions, and the phase only where the driver owns it (Conflict, Lost,
// and handing either back to the core).
func driverStatus(o holdObservation) v1alpha1.IPAddressStatus {
	a := o.address
	st := *a.Status.DeepCopy()
	gen := a.Generation
	cond := func(typ string, ok bool, reason, msg string) {
		c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
			ObservedGeneration: gen, LastTransitionTime: o.now}
		if ok {
			c.Status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, c)
	}

	phase := st.Phase
	switch {
	case len(o.wrongful) > 0:
		phase = v1alpha1.AddressConflict
	case o.hold.Lost && o.carrier == nil:
		phase = v1alpha1.AddressLost
	case phase == v1alpha1.AddressConflict || phase == v1alpha1.AddressLost:
		// Handed back; the core refines it (to Released, say) on its pass.
		phase = v1alpha1.AddressAvailable
		if a.Spec.ClaimRef != nil {
			phase = v1alpha1.AddressBound
		}
	}
	if phase != st.Phase {
		st.Phase = phase
		st.LastPhaseTransitionTime = &o.now
	}

	if len(o.wrongful) > 0 {
		cond(v1alpha1.ConditionConflict, true, driver.ReasonHeldByOther, fmt.Sprintf("%s is held by %s, which is not associated with its claim",
			a.Spec.Address, serviceNames(o.wrongful)))
	} else {
		cond(v1alpha1.ConditionConflict, false, driver.ReasonNoConflict, "No Service holds the address wrongfully")
	}

	how := "shared handoff: the hold kept the address until the Service reported it"
	if !o.handoff.shared {
		how = fmt.Sprintf("gap handoff (%s): %s", o.handoff.reason, o.handoff.message)
	}
	switch {
	case o.carrier != nil && o.carried:
		reason := driver.ReasonGapHandoff
		if o.handoff.shared {
			reason = driver.ReasonSharedHandoff
		}
		cond(v1alpha1.ConditionAssociated, true, reason, fmt.Sprintf("Carried by Service %s/%s; %s", o.carrier.Namespace, o.carrier.Name, how))
	case o.carrier != nil:
		cond(v1alpha1.ConditionAssociated, true, driver.ReasonHandingOver,
			fmt.Sprintf("Associated with Service %s/%s; waiting for its load balancer to report the address; %s", o.carrier.Namespace, o.carrier.Name, how))
	default:
		cond(v1alpha1.ConditionAssociated, false, driver.ReasonNotAssociated, msgNotAssociated)
	}

	if dropped(o) {
		cond(v1alpha1.ConditionDropped, true, v1alpha1.ReasonNoLongerReported, fmt.Sprintf(
			"Service %s/%s carried %s and its load balancer no longer reports it (the Service's events say why); the address stays bound and associated, and goes to no one else",
			o.carrier.Namespace, o.carrier.Name, a.Spec.Address))
	} else {
		cond(v1alpha1.ConditionDropped, false, v1alpha1.ReasonNotDropped, msgNotDropped)
	}

	if o.carrier != nil && (o.carried || !o.handoff.shared) {
		cond(v1alpha1.ConditionHeld, false, driver.ReasonNotHeld, "A workload carries the address; the backend does not hold it separately")
	} else {
		reason := o.hold.Reason
		if reason == "" {
			reason = map[bool]string{true: driver.ReasonHeld, false: driver.ReasonHoldPending}[o.hold.Held]
		}
		cond(v1alpha1.ConditionHeld, o.hold.Held, reason, o.hold.Message)
	}
	return st
}

// dropped: the live carrier does not report the address, though it did.
// The address's own status remembers that: its Associated condition said
// carried, or it is Dropped already. Ending an association resets both
// (see dissociate), so they never speak of an earlier carrier.
func dropped(o holdObservation) bool {
	if o.carrier == nil || o.carried {
		return false
	}
	conds := o.address.Status.Conditions
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionAssociated); c != nil && c.Status == metav1.ConditionTrue && isCarried(c.Reason) {
		return true
	}
	return meta.IsStatusConditionTrue(conds, v1alpha1.ConditionDropped)
}

// dissociated clears the association from st, and with it what the
// address remembers of its carrier: the next association starts afresh, so
// that a new carrier still handing over never counts as one that dropped it.
func dissociated(st *v1alpha1.IPAddressStatus, gen int64, now metav1.Time) {
	if st.AssociatedTo == nil {
		return
	}
	st.AssociatedTo = nil
	for _, c := range []metav1.Condition{
		{Type: v1alpha1.ConditionAssociated, Status: metav1.ConditionFalse, Reason: driver.ReasonNotAssociated, Message: msgNotAssociated},
		{Type: v1alpha1.ConditionDropped, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonNotDropped, Message: msgNotDropped},
	} {
		if meta.FindStatusCondition(st.Conditions, c.Type) == nil {
			continue // the driver has not written its conditions yet
		}
		c.ObservedGeneration, c.LastTransitionTime = gen, now
		meta.SetStatusCondition(&st.Conditions, c)
	}
}

// entitled says whether svc may carry address a: the backend's own hold, a
// Service letting go, a's recorded carrier until its association ends, or
// the Service that names a's live claim and may become its carrier.
//
// The recorded carrier stays entitled after its tenant removes the claim's
// annotation: ending the association marks it letting go before it clears
// associatedTo, so one of the two covers it throughout. A pass that read the
// carrier before the removal and lists Services after it would otherwise
// call the departing carrier a thief.
func entitled(b driver.Backend, svc *corev1.Service, a *v1alpha1.IPAddress, bindingLive bool) bool {
	if isHolder(b, svc, a) || releasing(b, svc) || isCarrier(a, svc) {
		return true
	}
	ref := a.Spec.ClaimRef
	return bindingLive && ref != nil && a.Status.AssociatedTo == nil &&
		svc.Namespace == ref.Namespace && svc.Annotations[v1alpha1.AnnotationIPAddressClaim] == ref.Name
}

// isCarrier reports whether a's status records svc as its carrier.
func isCarrier(a *v1alpha1.IPAddress, svc *corev1.Service) bool {
	w := a.Status.AssociatedTo
	return w != nil && w.Namespace == svc.Namespace && w.Name == svc.Name && (w.UID == "" || w.UID == svc.UID)
}

func serviceNames(svcs []*corev1.Service) string {
	names := make([]string, 0, len(svcs))
	for _, s := range svcs {
		names = append(names, "Service "+s.Namespace+"/"+s.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// isCarried reports whether an Associated reason says a workload carries the
// address.
func isCarried(reason string) bool {
	return reason == driver.ReasonSharedHandoff || reason == driver.ReasonGapHandoff
}
