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

package manager

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Index is one field index of a manager's cache.
type Index struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// AddIndexes registers indexes on a manager's cache.
func AddIndexes(ctx context.Context, idx client.FieldIndexer, indexes ...Index) error {
	for _, i := range indexes {
		if err := idx.IndexField(ctx, i.Object, i.Field, i.Extract); err != nil {
			return err
		}
	}
	return nil
}

// Fields of the IPAddress indexes both managers look addresses up by.
const (
	// IndexAddressByClaim is the "namespace/name" of spec.claimRef.
	IndexAddressByClaim = "address.claimRef"
	// IndexAddressByIP is spec.address.
	IndexAddressByIP = "address.ip"
	// IndexAddressByClass is spec.className.
	IndexAddressByClass = "address.className"
	// IndexClassByProvisioner is a class's spec.provisioner.
	IndexClassByProvisioner = "class.provisioner"
)

// ClassByProvisioner indexes classes by the driver serving them.
func ClassByProvisioner() Index {
	return Index{Object: &v1alpha1.IPAddressClass{}, Field: IndexClassByProvisioner, Extract: func(o client.Object) []string {
		return []string{o.(*v1alpha1.IPAddressClass).Spec.Provisioner}
	}}
}

// AddressIndexes are the IPAddress indexes both managers need.
func AddressIndexes() []Index {
	return []Index{
		{&v1alpha1.IPAddress{}, IndexAddressByClaim, func(o client.Object) []string {
			if ref := o.(*v1alpha1.IPAddress).Spec.ClaimRef; ref != nil {
				return []string{ref.Key()}
			}
			return nil
		}},
		{&v1alpha1.IPAddress{}, IndexAddressByIP, func(o client.Object) []string {
			return []string{o.(*v1alpha1.IPAddress).Spec.Address}
		}},
		{&v1alpha1.IPAddress{}, IndexAddressByClass, func(o client.Object) []string {
			return []string{o.(*v1alpha1.IPAddress).Spec.ClassName}
		}},
	}
}

// DuplicateOf names the IPAddress that keeps a's spec.address if a does not,
// by v1alpha1's DuplicateOf rule over the addresses c lists under
// IndexAddressByIP; "" when a keeps it. The core reports duplicates by it
// and a driver stands aside for them by it, so the two never disagree on
// what they read alike.
func DuplicateOf(ctx context.Context, c client.Reader, a *v1alpha1.IPAddress) (string, error) {
	list := &v1alpha1.IPAddressList{}
	if err := c.List(ctx, list, client.MatchingFields{IndexAddressByIP: a.Spec.Address}); err != nil {
		return "", err
	}
	if first := a.DuplicateOf(list.Items); first != nil {
		return first.Name, nil
	}
	return "", nil
}

// ClassFamiliesChanged passes a class's updates that change the families its
// driver reports it serves (status.families): a claim for a family the
// class cannot serve waits on them, in the core and in the driver.
func ClassFamiliesChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !slices.Equal(e.ObjectOld.(*v1alpha1.IPAddressClass).Status.Families, e.ObjectNew.(*v1alpha1.IPAddressClass).Status.Families)
	}}
}
