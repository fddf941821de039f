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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// SetupWithManager registers the class controller and its watches on mgr.
func (r *ClassReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	return ctrl.NewControllerManagedBy(mgr).Named("ipaddressclass").
		For(&v1alpha1.IPAddressClass{}).
		Watches(&v1alpha1.IPAddressClassUsage{}, handler.EnqueueRequestsFromMapFunc(classOfLedger)).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(classOfAddress), builder.WithPredicates(manager.DeleteOnly())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(concurrency, 1)}).
		Complete(manager.RetryConflicts(r))
}

// classOfAddress wakes the class of a deleted address: a class being deleted
// waits for its last address.
func classOfAddress(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.(*v1alpha1.IPAddress).Spec.ClassName}}}
}
