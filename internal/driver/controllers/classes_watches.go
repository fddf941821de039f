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
	"net/netip"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
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
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// usageBatch is how long an address that came or went inside its class's
// ranges waits for its class's pass: the events of a burst of claims share
// one pass and at most one status write per class, instead of one each.
const usageBatch = time.Second

// setupWithManager registers the class controller, its watches and the
// backend's extra ones on mgr. A Gate does not park its passes.
func (r *ClassReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options, extra []driver.Watch) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("class").
		For(&v1alpha1.IPAddressClass{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.servedByUs), notOnlyCounts())).
		Watches(&v1alpha1.IPAddress{}, r.addressEvents()).
		WithOptions(opts)
	return addWatches(b, extra).Complete(manager.RetryConflicts(r))
}

// addressEvents wakes the class of an address that came or went: at once
// when the address lies outside the class's ranges, which the rendering
// keeps one by one, and after usageBatch when it lies inside them, where it
// changes only the class's counts. A wake-up already waiting absorbs the
// next ones.
func (r *ClassReconciler) addressEvents() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	wake := func(ctx context.Context, o client.Object, q queue) {
		a := o.(*v1alpha1.IPAddress)
		class, err := r.servedClass(ctx, a.Spec.ClassName)
		if err != nil || class == nil {
			return
		}
		req := reconcile.Request{NamespacedName: client.ObjectKey{Name: class.Name}}
		if ip, err := a.IP(); err == nil && r.rendered.covers(class, ip) {
			q.AddAfter(req, usageBatch)
			return
		}
		q.Add(req)
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { wake(ctx, e.Object, q) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { wake(ctx, e.Object, q) },
	}
}

// renderedRanges are the ranges of each class's last rendering, by name,
// UID and generation: the answer to whether an address lies inside a
// class's ranges without decoding its parameters again. A class not
// rendered as it now is has no answer, and its addresses wake it at once.
type renderedRanges struct{ m sync.Map }

type rendering struct {
	uid        types.UID
	generation int64
	ranges     []ipaddr.Range
}

func (rr *renderedRanges) record(class *v1alpha1.IPAddressClass, res driver.RenderResult) {
	if res.Problem != "" {
		rr.forget(class.Name)
		return
	}
	rr.m.Store(class.Name, rendering{uid: class.UID, generation: class.Generation, ranges: res.Ranges})
}

func (rr *renderedRanges) forget(class string) { rr.m.Delete(class) }

// covers says whether class's last rendering, of this very class (its UID)
// at its current generation, has ip inside its ranges.
func (rr *renderedRanges) covers(class *v1alpha1.IPAddressClass, ip netip.Addr) bool {
	v, ok := rr.m.Load(class.Name)
	if !ok || v.(rendering).uid != class.UID || v.(rendering).generation != class.Generation {
		return false
	}
	return slices.ContainsFunc(v.(rendering).ranges, func(r ipaddr.Range) bool { return r.Contains(ip) })
}

// notOnlyCounts passes every class event but an update of nothing beyond
// the counts in its status: the pass that wrote them has nothing left to
// do, and waking it again would undo the batching of address events.
func notOnlyCounts() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, new := e.ObjectOld.(*v1alpha1.IPAddressClass).DeepCopy(), e.ObjectNew.(*v1alpha1.IPAddressClass).DeepCopy()
		for _, c := range []*v1alpha1.IPAddressClass{old, new} {
			c.ResourceVersion, c.ManagedFields = "", nil
			c.Status.Capacity, c.Status.Used, c.Status.Available = nil, nil, nil
		}
		return !equality.Semantic.DeepEqual(old, new)
	}}
}
