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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// setupWithManager registers the class controller, its watches and the
// backend's extra ones on mgr. A Gate does not park its passes.
func (r *ClassReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options, extra []Watch) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("class").
		For(&v1alpha1.IPAddressClass{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.servedByUs))).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(r.classToRerender), builder.WithPredicates(manager.CreateOrDelete())).
		WithOptions(opts)
	return addWatches(b, extra).Complete(manager.RetryConflicts(r))
}

// classToRerender wakes the class of an address that came or went outside
// the class's ranges: the rendering keeps such addresses one by one. One in
// range changes nothing rendered.
func (d *base) classToRerender(ctx context.Context, o client.Object) []reconcile.Request {
	a := o.(*v1alpha1.IPAddress)
	class, err := d.servedClass(ctx, a.Spec.ClassName)
	if err != nil || class == nil {
		return nil
	}
	if ip, err := a.IP(); err == nil && d.backend.InRange(class, ip) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: class.Name}}}
}
