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
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// setupWithManager registers the address controller, its watches and the
// backend's extra ones on mgr.
func (r *AddressReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options, extra []driver.Watch) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("ipaddress").
		For(&v1alpha1.IPAddress{}).
		Watches(&corev1.Service{}, serviceToAddresses(r.base)).
		Watches(&v1alpha1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(r.addressesOfClaim)).
		WithOptions(opts)
	return r.parked(addWatches(b, extra), r)
}

func (d *base) addressesOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	return d.addressRequests(ctx, indexAddressByClaim, o.GetNamespace()+"/"+o.GetName())
}

func (d *base) addressRequests(ctx context.Context, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, d, &v1alpha1.IPAddressList{}, index, key)
}

// serviceToAddresses wakes the addresses a Service is associated with, and
// those whose IP it carries now or carried before the change.
func serviceToAddresses(d *base) handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], svcs ...client.Object) {
		for _, o := range svcs {
			s := o.(*corev1.Service)
			for _, r := range d.addressRequests(ctx, indexAddressByAssociation, s.Namespace+"/"+s.Name) {
				q.Add(r)
			}
			for _, ip := range ingressIPs(s) {
				for _, r := range d.addressRequests(ctx, indexAddressByIP, ip) {
					q.Add(r)
				}
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}
