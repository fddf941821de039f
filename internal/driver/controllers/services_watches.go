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

	corev1 "k8s.io/api/core/v1"
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

// setupWithManager registers the Service controller, its watches and the
// backend's extra ones on mgr.
func (r *ServiceReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options, extra []driver.Watch) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("service").
		For(&corev1.Service{}, builder.WithPredicates(predicate.Or(predicate.AnnotationChangedPredicate{},
			predicate.GenerationChangedPredicate{}, ingressChanged()))).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(r.servicesOfAddress), builder.WithPredicates(changed(associationOf))).
		Watches(&v1alpha1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(r.servicesOfClaim)).
		WithOptions(opts)
	return r.parked(addWatches(b, extra), r)
}

// servicesOfAddress wakes the Service an address is associated with and the
// Services naming its claim.
func (d *base) servicesOfAddress(ctx context.Context, o client.Object) []reconcile.Request {
	a := o.(*v1alpha1.IPAddress)
	var reqs []reconcile.Request
	if w := a.Status.AssociatedTo; w != nil {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: w.Namespace, Name: w.Name}})
	}
	if ref := a.Spec.ClaimRef; ref != nil {
		reqs = append(reqs, d.serviceRequests(ctx, ref.Key())...)
	}
	return reqs
}

func (d *base) servicesOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	return d.serviceRequests(ctx, o.GetNamespace()+"/"+o.GetName())
}

func (d *base) serviceRequests(ctx context.Context, claimKey string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, d, &corev1.ServiceList{}, indexServiceByClaim, claimKey)
}
