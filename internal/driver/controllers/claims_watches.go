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
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// setupWithManager registers the claim controller, its watches and the
// backend's extra ones on mgr.
func (r *ClaimReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options, extra []driver.Watch) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("claim").
		For(&v1alpha1.IPAddressClaim{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.stampedForUs))).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(claimOfAddress), builder.WithPredicates(changed(bindingOf))).
		Watches(&v1alpha1.IPAddressClass{}, handler.EnqueueRequestsFromMapFunc(r.pendingClaimsOfClass),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, manager.ClassFamiliesChanged()))).
		WithOptions(opts)
	return r.parked(addWatches(b, extra), r)
}

func claimOfAddress(_ context.Context, o client.Object) []reconcile.Request {
	if ref := o.(*v1alpha1.IPAddress).Spec.ClaimRef; ref != nil {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}}
	}
	return nil
}

func (d *base) pendingClaimsOfClass(ctx context.Context, o client.Object) []reconcile.Request {
	return manager.RequestsByIndex(ctx, d, &v1alpha1.IPAddressClaimList{}, indexPendingClaimByClass, o.GetName())
}
