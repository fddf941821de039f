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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// ClassReconciler protects classes that still have addresses.
//
// Design: a class names the driver that holds its addresses, so it stays
// while any IPAddress of it exists, in any phase. Deleting it only stops new
// claims from resolving to it; bound claims never consult their class again.
// A class with addressesPerNamespace also reports, on its WithinLimits
// condition, the namespaces that hold more than the limit (class_limits.go).
type ClassReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	Clock    clock.PassiveClock
}

// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses/status,verbs=get;update

// Reconcile runs one pass over a class.
func (r *ClassReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &v1alpha1.IPAddressClass{}
	if err := r.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if class.DeletionTimestamp == nil {
		if controllerutil.ContainsFinalizer(class, v1alpha1.FinalizerClassProtection) {
			return ctrl.Result{}, r.reportLimits(ctx, class)
		}
		controllerutil.AddFinalizer(class, v1alpha1.FinalizerClassProtection)
		return ctrl.Result{}, r.Update(ctx, class)
	}
	if !controllerutil.ContainsFinalizer(class, v1alpha1.FinalizerClassProtection) {
		return ctrl.Result{}, nil
	}
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{indexAddressByClass: class.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	if len(list.Items) > 0 {
		r.Recorder.Eventf(class, nil, corev1.EventTypeWarning, v1alpha1.EventClassInUse, "Delete",
			"Deletion waits for %d IPAddress(es) of this class: %s", len(list.Items), describeInUse(list.Items))
		return ctrl.Result{}, nil
	}
	controllerutil.RemoveFinalizer(class, v1alpha1.FinalizerClassProtection)
	return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, class))
}

// describeInUse names the addresses holding a class, with their phases, up to
// a length an event can carry.
func describeInUse(items []v1alpha1.IPAddress) string {
	const shown = 10
	parts := make([]string, 0, min(len(items), shown))
	for _, a := range items {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", a.Name, a.Spec.Address, phaseLabel(string(a.Status.Phase))))
	}
	slices.Sort(parts)
	if len(parts) > shown {
		return strings.Join(parts[:shown], ", ") + fmt.Sprintf(" and %d more", len(parts)-shown)
	}
	return strings.Join(parts, ", ")
}
