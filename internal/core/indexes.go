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
	"context"
	"net/netip"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// Field indexes: every lookup a reconcile makes goes through one of these, so
// that no reconcile lists a whole kind.
const (
	indexAddressByClaim = manager.IndexAddressByClaim
	indexAddressByClass = manager.IndexAddressByClass
	indexAddressByIP    = manager.IndexAddressByIP
	// indexAddressByClassFamilyPhase: "class/family/phase".
	indexAddressByClassFamilyPhase = "core.addressByClassFamilyPhase"
	// indexClaimByAddressName: spec.addressName of claims that name one.
	indexClaimByAddressName = "core.claimByAddressName"
	// indexPendingClaim: for claims not yet Bound (nor Lost), "class:<name>"
	// for the class they resolve to ("class:" while unresolved) and
	// "class:<name>/<family>" for each family still missing.
	indexPendingClaim = "core.pendingClaim"
	// indexDefaultClass: "true" on classes carrying the default annotation.
	indexDefaultClass = "core.defaultClass"
)

func classFamilyPhaseKey(class string, family v1alpha1.IPFamily, phase v1alpha1.IPAddressPhase) string {
	return class + "/" + string(family) + "/" + string(phase)
}

func pendingClassKey(class string) string { return "class:" + class }

func pendingFamilyKey(class string, family v1alpha1.IPFamily) string {
	return "class:" + class + "/" + string(family)
}

func setupIndexes(ctx context.Context, idx client.FieldIndexer) error {
	return manager.AddIndexes(ctx, idx, append(append(manager.AddressIndexes(),
		manager.Index{Object: &v1alpha1.IPAddress{}, Field: indexAddressByClassFamilyPhase, Extract: func(o client.Object) []string {
			a := o.(*v1alpha1.IPAddress)
			return []string{classFamilyPhaseKey(a.Spec.ClassName, a.Family(), a.Status.Phase)}
		}},
		manager.Index{Object: &v1alpha1.IPAddressClaim{}, Field: indexClaimByAddressName, Extract: func(o client.Object) []string {
			if name := o.(*v1alpha1.IPAddressClaim).Spec.AddressName; name != "" {
				return []string{name}
			}
			return nil
		}},
		manager.Index{Object: &v1alpha1.IPAddressClaim{}, Field: indexPendingClaim, Extract: func(o client.Object) []string {
			return pendingKeys(o.(*v1alpha1.IPAddressClaim))
		}},
		manager.Index{Object: &v1alpha1.IPAddressClass{}, Field: indexDefaultClass, Extract: func(o client.Object) []string {
			if o.(*v1alpha1.IPAddressClass).IsDefault() {
				return []string{"true"}
			}
			return nil
		}},
	), accessIndexes()...)...)
}

// pendingKeys indexes a claim that still waits for an address by the class it
// waits on and the families it misses.
func pendingKeys(c *v1alpha1.IPAddressClaim) []string {
	if c.Status.Phase == v1alpha1.ClaimBound || c.Status.Phase == v1alpha1.ClaimLost || c.DeletionTimestamp != nil {
		return nil
	}
	class := c.Spec.ClassName
	if class == "" {
		class = c.Status.ClassName
	}
	keys := []string{pendingClassKey(class)}
	if class == "" {
		return keys
	}
	held := map[v1alpha1.IPFamily]bool{}
	for _, a := range c.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			held[v1alpha1.FamilyOf(ip)] = true
		}
	}
	for _, f := range c.Spec.Family.Families() {
		if !held[f] {
			keys = append(keys, pendingFamilyKey(class, f))
		}
	}
	return keys
}
