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
