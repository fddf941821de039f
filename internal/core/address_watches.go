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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// SetupWithManager registers the address controller and its watches on mgr.
func (r *AddressReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipaddress").
		For(&v1alpha1.IPAddress{}, builder.WithPredicates(predicate.Or(specOrMetadataChanged(), phaseChanged()))).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(r.sameIP), builder.WithPredicates(standingChanged())).
		Watches(&v1alpha1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(r.addressesForClaim)).
		Watches(&v1alpha1.IPAddressClass{}, handler.EnqueueRequestsFromMapFunc(r.releasedOfClass), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(manager.RetryConflicts(r))
}

// addressesForClaim wakes the addresses whose claimRef names the claim.
func (r *AddressReconciler) addressesForClaim(ctx context.Context, obj client.Object) []reconcile.Request {
	return addressesByIndex(ctx, r.Client, indexAddressByClaim, obj.GetNamespace()+"/"+obj.GetName())
}

// sameIP wakes the other addresses with the same spec.address, whose
// duplicate verdict may change.
func (r *AddressReconciler) sameIP(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, req := range addressesByIndex(ctx, r.Client, indexAddressByIP, obj.(*v1alpha1.IPAddress).Spec.Address) {
		if req.Name != obj.GetName() {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// standingChanged passes an address's creation and deletion, and the
// updates that move it in the duplicate rule's order (v1alpha1's
// DuplicateOf): the core's verdict on it, or its binding.
func standingChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*v1alpha1.IPAddress), e.ObjectNew.(*v1alpha1.IPAddress)
		return o.KeepsAddress() != n.KeepsAddress() || o.HasBinding() != n.HasBinding()
	}}
}

// releasedOfClass wakes a class's Released addresses: its releaseDelay may
// have changed. The class's status writes (the driver's counts) change
// nothing they read.
func (r *AddressReconciler) releasedOfClass(ctx context.Context, obj client.Object) []reconcile.Request {
	families := []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6}
	reqs := make([]reconcile.Request, 0, len(families))
	for _, f := range families {
		reqs = append(reqs, addressesByIndex(ctx, r.Client, indexAddressByClassFamilyPhase,
			classFamilyPhaseKey(obj.GetName(), f, v1alpha1.AddressReleased))...)
	}
	return reqs
}

func addressesByIndex(ctx context.Context, c client.Reader, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, c, &v1alpha1.IPAddressList{}, index, key)
}
