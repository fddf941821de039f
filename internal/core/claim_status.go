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
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// classResolution is the outcome of resolving a claim's class.
type classResolution struct {
	// consulted is false when every family was satisfied and the class was
	// not looked at: the previous ClassResolved condition then stands.
	consulted bool
	// name and provisioner of the resolved class; empty when unresolved.
	name, provisioner string
	// object is the resolved class, for its access policy.
	object *v1alpha1.IPAddressClass
	// reason and message of the ClassResolved condition.
	reason, message string
}

func (r classResolution) resolved() bool { return r.consulted && r.name != "" }

// familyWait says why one family of a claim is not bound.
type familyWait struct {
	reason, message string
}

// claimObservation is everything a claim pass saw, for the status function.
type claimObservation struct {
	claim *v1alpha1.IPAddressClaim
	// bound holds the address satisfying each family.
	bound map[v1alpha1.IPFamily]*v1alpha1.IPAddress
	// lost holds, for a family whose bound address is Lost, that address.
	lost  map[v1alpha1.IPFamily]*v1alpha1.IPAddress
	class classResolution
	// admitted is the class the claim is admitted to, "" if none.
	admitted string
	// waits explains each family that is neither bound nor lost.
	waits map[v1alpha1.IPFamily]familyWait
	// now stamps conditions whose status flips.
	now metav1.Time
}

// claimStatus derives a claim's status from what a pass observed. It never
// reads a client, so it is tested with tables.
func claimStatus(o claimObservation) v1alpha1.IPAddressClaimStatus {
	old := o.claim.Status
	st := *old.DeepCopy()
	gen := o.claim.Generation

	if o.class.resolved() {
		st.ClassName = o.class.name
	}
	st.AdmittedClassName = o.admitted
	if o.class.consulted {
		cond := metav1.Condition{Type: v1alpha1.ConditionClassResolved, Status: metav1.ConditionTrue,
			Reason: o.class.reason, Message: o.class.message, ObservedGeneration: gen, LastTransitionTime: o.now}
		if !o.class.resolved() {
			cond.Status = metav1.ConditionFalse
		}
		meta.SetStatusCondition(&st.Conditions, cond)
	} else if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionClassResolved); c != nil {
		c.ObservedGeneration = gen
	}

	st.Addresses = nil
	for _, a := range o.bound {
		st.Addresses = append(st.Addresses, v1alpha1.ClaimedAddress{Name: a.Name, Address: a.Spec.Address})
	}
	slices.SortFunc(st.Addresses, func(a, b v1alpha1.ClaimedAddress) int { return strings.Compare(a.Name, b.Name) })

	bound := metav1.Condition{Type: v1alpha1.ConditionBound, ObservedGeneration: gen, LastTransitionTime: o.now}
	missing := missingFamilies(o.claim, o.bound)
	wasBound := old.Phase == v1alpha1.ClaimBound || old.Phase == v1alpha1.ClaimLost
	switch {
	case len(missing) == 0:
		st.Phase = v1alpha1.ClaimBound
		bound.Status, bound.Reason = metav1.ConditionTrue, v1alpha1.ReasonBound
		bound.Message = "Bound to " + describeAddresses(st.Addresses)
	case wasBound || len(o.lost) > 0:
		// A claim never silently gets a replacement: it stays Lost until
		// its own address comes back.
		st.Phase = v1alpha1.ClaimLost
		bound.Status, bound.Reason = metav1.ConditionFalse, v1alpha1.ReasonAddressLost
		bound.Message = lostMessage(missing, o.lost)
	default:
		st.Phase = v1alpha1.ClaimPending
		w := o.waits[missing[0]]
		bound.Status, bound.Reason, bound.Message = metav1.ConditionFalse, w.reason, w.message
		if bound.Reason == "" {
			bound.Reason = v1alpha1.ReasonWaitingForProvisioning
		}
	}
	meta.SetStatusCondition(&st.Conditions, bound)
	return st
}

// missingFamilies lists the families the claim asks for and lacks, IPv4 first.
func missingFamilies(c *v1alpha1.IPAddressClaim, bound map[v1alpha1.IPFamily]*v1alpha1.IPAddress) []v1alpha1.IPFamily {
	var out []v1alpha1.IPFamily
	for _, f := range c.Spec.Family.Families() {
		if bound[f] == nil {
			out = append(out, f)
		}
	}
	return out
}

func joinFamilies(fs []v1alpha1.IPFamily) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
	}
	return strings.Join(parts, " and ")
}

// describeAddresses names the addresses by IP alone: status.addresses
// beside the message names their objects (issue 43: every status write
// stores the message again).
func describeAddresses(as []v1alpha1.ClaimedAddress) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, a.Address)
	}
	return strings.Join(parts, ", ")
}

func lostMessage(missing []v1alpha1.IPFamily, lost map[v1alpha1.IPFamily]*v1alpha1.IPAddress) string {
	parts := make([]string, 0, len(missing))
	for _, f := range missing {
		if a := lost[f]; a != nil {
			parts = append(parts, fmt.Sprintf("the %s address %s (%s) is Lost", f, a.Name, a.Spec.Address))
		} else {
			parts = append(parts, fmt.Sprintf("the bound %s address is gone", f))
		}
	}
	return strings.Join(parts, "; ") + "; the claim returns to Bound when its address comes back"
}

// claimWarning is a Warning event a status change calls for.
type claimWarning struct {
	reason, action, note string
}

// claimWarnings lists the Warning events an admin must see when a claim's
// status goes from old to st: the claim going Lost, and its class failing to
// resolve (or failing for another reason than before). A status written again
// unchanged calls for none, so a lasting problem is reported once.
func claimWarnings(old, st v1alpha1.IPAddressClaimStatus) []claimWarning {
	var out []claimWarning
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionClassResolved); c != nil && c.Status == metav1.ConditionFalse {
		prev := meta.FindStatusCondition(old.Conditions, v1alpha1.ConditionClassResolved)
		if prev == nil || prev.Status != c.Status || prev.Reason != c.Reason || prev.Message != c.Message {
			out = append(out, claimWarning{reason: c.Reason, action: "ResolveClass", note: c.Message})
		}
	}
	if st.Phase == v1alpha1.ClaimLost && old.Phase != v1alpha1.ClaimLost {
		note := "Lost"
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionBound); c != nil {
			note = "Lost: " + c.Message
		}
		out = append(out, claimWarning{reason: v1alpha1.EventClaimLost, action: "Bind", note: note})
	}
	return out
}
