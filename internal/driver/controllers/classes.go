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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// ClassReconciler renders each class this driver serves into backend
// configuration.
//
// Design: the backend renders the class's parameters, keeping every address
// of the class valid whatever the parameters now say, so that shrinking a
// class never strands an address. Bad parameters leave what was rendered
// before untouched and say exactly what is wrong, on the class's Rendered
// condition and in a Warning event. The same pass counts the class's
// addresses (its field index, never a list of the kind) into status.used
// and available beside the rendered capacity, and writes only when a number
// changed; addresses inside the ranges wake it in batches (usageBatch).
type ClassReconciler struct {
	*base
	// rendered are the ranges of each class's last rendering.
	rendered renderedRanges
}

// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses/status,verbs=patch
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses/finalizers,verbs=update

// Reconcile runs one rendering pass over a class.
func (r *ClassReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class, err := r.servedClass(ctx, req.Name)
	if err != nil || class == nil || class.DeletionTimestamp != nil {
		r.rendered.forget(req.Name)
		return ctrl.Result{}, err
	}
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{indexAddressByClass: class.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	keep := make([]netip.Addr, 0, len(list.Items))
	for _, a := range list.Items {
		if ip, err := a.IP(); err == nil {
			keep = append(keep, ip)
		}
	}
	res, err := r.backend.RenderClass(ctx, class, keep)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.rendered.record(class, res)
	// Parameters that do not render leave the previous rendering, and so
	// its families and capacity, in place.
	families, capacity := res.Families, &res.Capacity
	if res.Problem != "" {
		families, capacity = class.Status.Families, countsOf(class.Status.Capacity)
	}
	capacityStatus, usedStatus, availableStatus := classCounts(families, capacity, countAddrs(keep), countAddrs(res.Outside))
	if capacity != nil {
		r.metrics.capacity.WithLabelValues(class.Name).Set(float64(capacity.Total()))
	}
	r.metrics.classRendered(class.Name)

	cond := metav1.Condition{Type: v1alpha1.ConditionRendered, Status: metav1.ConditionTrue, Reason: driver.ReasonRendered,
		ObservedGeneration: class.Generation, LastTransitionTime: metav1.NewTime(r.clock.Now()),
		Message: fmt.Sprintf("Rendered; %d addresses in range", res.Capacity.Total())}
	switch {
	case res.Problem != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, res.Reason, res.Problem
	case res.Unusable != "":
		cond.Reason, cond.Message = res.UnusableReason, "Rendered, but "+res.Unusable
	case len(res.Outside) > 0:
		cond.Reason = driver.ReasonOutsideRange
		cond.Message = fmt.Sprintf("Rendered; addresses still in use outside the class's ranges are kept: %s", joinAddrs(res.Outside))
	}
	// A copy: setting the condition changes the one in the slice in place.
	said := ""
	if prev := meta.FindStatusCondition(class.Status.Conditions, v1alpha1.ConditionRendered); prev != nil {
		said = prev.Message
	}
	wrote, err := manager.PatchStatus(ctx, r.Client, class, func(c *v1alpha1.IPAddressClass) {
		meta.SetStatusCondition(&c.Status.Conditions, cond)
		c.Status.Families = families
		c.Status.Capacity, c.Status.Used, c.Status.Available = capacityStatus, usedStatus, availableStatus
	})
	if err != nil || !wrote {
		return ctrl.Result{}, client.IgnoreNotFound(err) // a class deleted meanwhile needs no status
	}
	if res.Problem != "" && said != res.Problem {
		r.recorder.Eventf(class, nil, corev1.EventTypeWarning, res.Reason, "Render", "Nothing rendered: %s", res.Problem)
	}
	if res.Unusable != "" && said != cond.Message {
		r.recorder.Eventf(class, nil, corev1.EventTypeWarning, res.UnusableReason, "Render", "%s", cond.Message)
	}
	return ctrl.Result{}, nil
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}
