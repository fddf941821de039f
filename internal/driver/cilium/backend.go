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

package cilium

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/controllers"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// Cilium's annotations (operator v1.20.2), with the aliases it also reads.
const (
	annotationIPs                 = "lbipam.cilium.io/ips"
	annotationIPsAlias            = "io.cilium/lb-ipam-ips"
	annotationSharingKey          = "lbipam.cilium.io/sharing-key"
	annotationSharingKeyAlias     = "io.cilium/lb-ipam-sharing-key"
	annotationCrossNamespace      = "lbipam.cilium.io/sharing-cross-namespace"
	annotationCrossNamespaceAlias = "io.cilium/lb-ipam-sharing-cross-namespace"
	// conditionPoolConflict is the condition LB-IPAM sets on a pool whose
	// blocks overlap another pool's; such a pool serves nothing.
	conditionPoolConflict = "cilium.io/PoolConflict"
)

// The driver's names.
const (
	// ManagedByValue is the value of v1alpha1.LabelManagedBy on the pools and
	// placeholders the driver writes.
	ManagedByValue = "cilium-iad"
	// fieldOwner is the server-side apply manager of rendered pools.
	fieldOwner = "cilium-iad"
	// poolPrefix keeps rendered pools apart from pools admins write by hand.
	poolPrefix = "iad-"
)

// +kubebuilder:rbac:groups=cilium.io,resources=ciliumloadbalancerippools,verbs=get;list;watch;create;patch

// The capabilities the framework finds by type assertion: a slip in one of
// their signatures would turn it off without a word.
var (
	_ driver.Backend  = (*Backend)(nil)
	_ driver.Holder   = (*Backend)(nil)
	_ driver.Sharer   = (*Backend)(nil)
	_ driver.Releaser = (*Backend)(nil)
	_ driver.Watcher  = (*Backend)(nil)
)

// Backend implements driver.Backend with Cilium's LB-IPAM: one
// CiliumLoadBalancerIPPool per class, placeholder Services hold
// reservations in LB-IPAM's books, and lbipam.cilium.io/ips pins workloads.
// LB-IPAM retries every Service it could not serve whenever a Service goes,
// so the backend needs no retry of its own.
type Backend struct {
	client.Client
	// Holds gives the placeholders (Holds.Set) the role of holds.
	placeholder.Holds
	opts   Options
	secret *placeholder.Secret
}

// Setup registers the Cilium driver on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.PlaceholderNamespace == "" {
		return fmt.Errorf("the placeholder namespace must be set")
	}
	set := &placeholder.Set{Client: mgr.GetClient(), Namespace: opts.PlaceholderNamespace,
		Labels: map[string]string{v1alpha1.LabelManagedBy: ManagedByValue}, Pin: annotationIPs, Allocator: "Cilium's LB-IPAM"}
	b := &Backend{Client: mgr.GetClient(), Holds: placeholder.Holds{Set: set}, opts: opts,
		secret: &placeholder.Secret{Reader: mgr.GetAPIReader(), Namespace: opts.PlaceholderNamespace, Clock: opts.Driver.Clock}}
	if err := b.Set.Indexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	opts.Driver.Provisioner = b.Provisioner()
	if err := controllers.Setup(mgr, b, opts.Driver); err != nil {
		return err
	}
	orphans := &placeholder.Orphans{Set: b.Set, Provisioner: b.Provisioner()}
	return orphans.Controller(mgr).Complete(manager.RetryConflicts(orphans))
}

// Provisioner is the Cilium driver's name.
func (b *Backend) Provisioner() string { return v1alpha1.ProvisionerCilium }

// Watches wakes the driver's controllers on placeholder and pool changes.
func (b *Backend) Watches() driver.Watches {
	// LB-IPAM writes a pool's counts on every allocation; only a conflict,
	// or what the driver renders, matters.
	conflict := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return conflictOf(e.ObjectOld.(*unstructured.Unstructured)) != conflictOf(e.ObjectNew.(*unstructured.Unstructured))
	}}
	w := b.Set.Watches()
	w.Classes = []driver.Watch{{Object: newPool(), Handler: handler.EnqueueRequestsFromMapFunc(classOfPool),
		Predicates: []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, conflict)}}}
	return w
}

// classOfPool maps a rendered pool to the class that owns it.
func classOfPool(_ context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "IPAddressClass" && ref.APIVersion == v1alpha1.GroupVersion.String() {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: ref.Name}}}
		}
	}
	return nil
}
