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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
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
	"github.com/cozystack/address-controller/internal/tombstone"
)

// SetupWithManager registers the claim controller and its watches on mgr.
func (r *ClaimReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipaddressclaim").
		For(&v1alpha1.IPAddressClaim{}, builder.WithPredicates(specOrMetadataChanged())).
		Watches(&v1alpha1.IPAddress{}, r.addressEvents()).
		Watches(&v1alpha1.IPAddressClass{}, handler.EnqueueRequestsFromMapFunc(r.claimsForClass),
			builder.WithPredicates(predicate.Or(specOrMetadataChanged(), manager.ClassFamiliesChanged()))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.unadmittedInNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&v1alpha1.IPAddressClassUsage{}, handler.EnqueueRequestsFromMapFunc(r.unadmittedForLedger), builder.WithPredicates(ledgerShrank())).
		Watches(&v1alpha1.IPAddressClassUsage{}, handler.EnqueueRequestsFromMapFunc(r.countedInLedger), builder.WithPredicates(manager.DeleteOnly())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(manager.RetryConflicts(r))
}

// addressEvents wakes, for an address event, the claims its claimRef names
// (before and after), the claims naming it in spec.addressName, and, only when
// it has just become Available, the claims waiting for its class and family:
// binding an Available address must not wake every waiting claim. It feeds
// the available set first, in the same goroutine, so that a claim it wakes
// finds the address there.
func (r *ClaimReconciler) addressEvents() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	wake := func(ctx context.Context, q queue, old, new *v1alpha1.IPAddress) {
		var reqs []reconcile.Request
		for _, a := range []*v1alpha1.IPAddress{old, new} {
			if a != nil && a.Spec.ClaimRef != nil {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: a.Spec.ClaimRef.Namespace, Name: a.Spec.ClaimRef.Name}})
			}
		}
		a := new
		if a == nil {
			a = old
		}
		reqs = append(reqs, r.claimsByIndex(ctx, indexClaimByAddressName, a.Name)...)
		if isAvailable(new) && !isAvailable(old) {
			reqs = append(reqs, r.claimsByIndex(ctx, indexPendingClaim, pendingFamilyKey(new.Spec.ClassName, new.Family()))...)
		}
		for _, req := range reqs {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			a := e.Object.(*v1alpha1.IPAddress)
			r.available.observe(nil, a)
			wake(ctx, q, nil, a)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			old, new := e.ObjectOld.(*v1alpha1.IPAddress), e.ObjectNew.(*v1alpha1.IPAddress)
			r.available.observe(old, new)
			if claimSees(old) != claimSees(new) {
				wake(ctx, q, old, new)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if a, ok := tombstone.As[*v1alpha1.IPAddress](e.Object); ok {
				r.available.observe(a, nil)
				wake(ctx, q, a, nil)
			}
		},
	}
}

// claimSees is what a claim pass reads of an address; other changes (the
// driver's conditions, say) leave every claim as it was.
func claimSees(a *v1alpha1.IPAddress) string {
	ref := ""
	if a.Spec.ClaimRef != nil {
		ref = a.Spec.ClaimRef.Key() + "/" + string(a.Spec.ClaimRef.UID)
	}
	return fmt.Sprint(ref, a.Status.Phase, a.DeletionTimestamp != nil)
}

// claimsForClass wakes the claims waiting on a class, and those with no class
// resolved yet, whose default may have changed.
func (r *ClaimReconciler) claimsForClass(ctx context.Context, obj client.Object) []reconcile.Request {
	return append(r.claimsByIndex(ctx, indexPendingClaim, pendingClassKey(obj.GetName())),
		r.claimsByIndex(ctx, indexPendingClaim, pendingClassKey(""))...)
}

func (r *ClaimReconciler) claimsByIndex(ctx context.Context, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, r, &v1alpha1.IPAddressClaimList{}, index, key)
}
