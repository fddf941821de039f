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

package driver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Binding reads the address's claim through c. live: the address is bound
// (claimRef with a UID) to a claim that exists, with that UID, and is not
// being deleted. reclaiming: that claim is being deleted and the address's
// policy is Delete, so the core is about to delete the address.
func Binding(ctx context.Context, c client.Reader, a *v1alpha1.IPAddress) (live, reclaiming bool, err error) {
	ref := a.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return false, false, nil
	}
	claim := &v1alpha1.IPAddressClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, claim); err != nil {
		return false, false, client.IgnoreNotFound(err)
	}
	if claim.UID != ref.UID {
		return false, false, nil
	}
	if claim.DeletionTimestamp != nil {
		return false, a.Spec.ReclaimPolicy == v1alpha1.ReclaimDelete, nil
	}
	return true, false, nil
}

// LatePinGrace bounds how long after an address's association ended a pin
// the driver wrote for that association may still land. The carrier's pass
// records the association, then pins the Service; a pass over the address
// that finds the claim gone in between ends the association while the
// Service carries no pin yet, so nothing withdraws the pin that lands after
// it until the Service's own pass sees the claim gone (a second, or a new
// leader's start after a kill). Meanwhile the backend may give the Service
// the address, sharing it with the hold under the claim's key; a hold that
// took another key then would lose the address to that Service.
const LatePinGrace = time.Minute

// LatePinGraceLeft is how much of LatePinGrace is left at now since a's
// association ended (its Associated condition turned False), and when it
// ended; zero where the condition is not False or the grace has passed.
func LatePinGraceLeft(a *v1alpha1.IPAddress, now time.Time) (left time.Duration, ended time.Time) {
	c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionAssociated)
	if c == nil || c.Status != metav1.ConditionFalse {
		return 0, time.Time{}
	}
	return max(0, c.LastTransitionTime.Add(LatePinGrace).Sub(now)), c.LastTransitionTime.Time
}
