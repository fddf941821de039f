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

package catchup

import (
	"context"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
)

// DefaultControllerSelector selects MetalLB's controller Pods as its Helm
// chart labels them.
const DefaultControllerSelector = "app.kubernetes.io/name=metallb,app.kubernetes.io/component=controller"

// Signals say where the gate's signals come from.
type Signals struct {
	// ProbeNamespace holds the probes (the placeholder namespace).
	ProbeNamespace string
	// MetalLBNamespace holds MetalLB's pools and its controller's Pods.
	MetalLBNamespace string
	// Controller selects MetalLB's controller Pods there.
	Controller labels.Selector
}

// CacheOptions scopes the manager's cache of Pods to MetalLB's controller.
func (s Signals) CacheOptions(opts *cache.Options) {
	opts.ByObject[&corev1.Pod{}] = cache.ByObject{Label: s.Controller,
		Namespaces: map[string]cache.Config{s.MetalLBNamespace: {}}}
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch,namespace=metallb-system

// Setup feeds the gate from the probes' answers, MetalLB's controller Pods
// (the direct start signal) and its pools' status (inference, while no
// such Pod is seen), and has the leader ask once as it starts, so that the
// readiness metric reads true from then on.
func (g *Gate) Setup(mgr ctrl.Manager, s Signals) error {
	if err := mgr.Add(crmanager.RunnableFunc(func(ctx context.Context) error {
		if err := g.Feed(ctx, Event{Kind: Write}); err != nil {
			log.FromContext(ctx).Error(err, "Asking MetalLB whether it handles single Service events")
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("probe").
		For(&corev1.Service{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, i := probeIndex(o.GetName())
			return o.GetNamespace() == s.ProbeNamespace && i >= 0
		}))).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, g.answered(ctx, req.NamespacedName)
		})); err != nil {
		return err
	}
	// Every replica follows MetalLB's starts, so that a new leader knows
	// them already; only the leader asks.
	ctx := log.IntoContext(context.Background(), mgr.GetLogger().WithName("metallb-start"))
	if err := manager.ObserveKind(ctx, mgr, &corev1.Pod{}, manager.States(func(pod *corev1.Pod, gone bool) {
		if at, ok := started(pod); ok && !gone && pod.Namespace == s.MetalLBNamespace {
			_ = g.Feed(ctx, Event{Kind: Started, At: at})
		}
	})); err != nil {
		return err
	}
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	return manager.ObserveKind(ctx, mgr, pool, manager.States(func(p *unstructured.Unstructured, gone bool) {
		if p.GetNamespace() != s.MetalLBNamespace {
			return
		}
		v4, _, _ := unstructured.NestedInt64(p.Object, "status", "assignedIPv4")
		v6, _, _ := unstructured.NestedInt64(p.Object, "status", "assignedIPv6")
		_ = g.Feed(ctx, Event{Kind: Pool, Pool: p.GetName(), Assigned: v4 + v6, Gone: gone})
	}))
}

// started is when the latest of pod's running containers started.
func started(pod *corev1.Pod) (time.Time, bool) {
	var at time.Time
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil && c.State.Running.StartedAt.After(at) {
			at = c.State.Running.StartedAt.Time
		}
	}
	return at, !at.IsZero()
}

// answered reads MetalLB's answer on a probe.
func (g *Gate) answered(ctx context.Context, key client.ObjectKey) error {
	set, i := probeIndex(key.Name)
	probe := &corev1.Service{}
	if err := g.client.Get(ctx, key, probe); apierrors.IsNotFound(err) {
		return g.Feed(ctx, Event{Kind: ProbeGone, Set: set, Probe: i})
	} else if err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339Nano, probe.Annotations[v1alpha1.AnnotationProbeAsked])
	rv, rvErr := strconv.ParseUint(probe.ResourceVersion, 10, 64)
	if err != nil || rvErr != nil || probe.Annotations[AnnotationAllocatedFromPool] != "" {
		return nil // not answered yet
	}
	return g.Feed(ctx, Event{Kind: Answered, Set: set, Probe: i, Revision: rv, At: at})
}

// probeIndex finds name among the probes; i is -1 when it is none.
func probeIndex(name string) (set, i int) {
	for set := range probeNames {
		if i := slices.Index(probeNames[set][:], name); i >= 0 {
			return set, i
		}
	}
	return 0, -1
}
