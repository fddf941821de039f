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

package metallb

import (
	"context"
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/controllers"
	"github.com/cozystack/address-controller/internal/driver/metallb/catchup"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// Options configure the MetalLB driver.
type Options struct {
	// PlaceholderNamespace holds the placeholder Services that keep reserved
	// addresses in MetalLB's books. Tenants must not be able to write to it.
	PlaceholderNamespace string
	// MetalLBNamespace is where MetalLB reads its IPAddressPools and
	// advertisements.
	MetalLBNamespace string
	// Driver tunes the backend-agnostic controllers.
	Driver driver.Options
	// MetalLBController selects MetalLB's controller Pods in its namespace,
	// whose start is the driver's direct signal that MetalLB catches up
	// (package catchup); nil means catchup.DefaultControllerSelector.
	MetalLBController labels.Selector
	// TrustMetalLBFor is how long the driver trusts MetalLB's prompt answer
	// that it handles single Service events before asking again, where no
	// start of MetalLB could show (no controller Pod, no pool big enough);
	// 0 means catchup.DefaultTrust.
	TrustMetalLBFor time.Duration
	// TrustMetalLBAlways keeps the gate open from the start, whatever the
	// driver sees. Not a flag: tests set it to act out what a driver does
	// in the moments before it notices that MetalLB stopped.
	TrustMetalLBAlways bool
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.PlaceholderNamespace, "placeholder-namespace", "metallb-iad-system",
		"Namespace of the placeholder Services; tenants must not be able to write to it.")
	o.BindImportFlags(fs)
	o.MetalLBController = defaultController
	fs.Func("metallb-controller-selector", "Label selector of MetalLB's controller Pods in its namespace, whose starts the driver watches (default \""+
		catchup.DefaultControllerSelector+"\"; MetalLB's plain manifests label them app=metallb,component=controller).", func(v string) error {
		sel, err := labels.Parse(v)
		if err == nil && sel.Empty() {
			err = fmt.Errorf("an empty selector would take the speakers' starts for the controller's")
		}
		o.MetalLBController = sel
		return err
	})
	o.Driver.BindFlags(fs)
}

// BindImportFlags registers on fs the options `metallb-iad import` reads.
func (o *Options) BindImportFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetalLBNamespace, "metallb-namespace", "metallb-system",
		"Namespace where MetalLB reads its configuration.")
}

// ManagerOptions scopes the manager's cache to what the driver reads:
// MetalLB's configuration in its namespace only, and Services trimmed by
// the framework.
func (o *Options) ManagerOptions(opts *ctrl.Options) {
	o.Driver.ManagerOptions(opts)
	for _, obj := range metallbObjects() {
		opts.Cache.ByObject[obj] = cache.ByObject{Namespaces: map[string]cache.Config{o.MetalLBNamespace: {}}}
	}
	o.signals().CacheOptions(&opts.Cache)
}

var defaultController = func() labels.Selector {
	sel, err := labels.Parse(catchup.DefaultControllerSelector)
	if err != nil {
		panic(err)
	}
	return sel
}()

func (o *Options) signals() catchup.Signals {
	sel := o.MetalLBController
	if sel == nil {
		sel = defaultController
	}
	return catchup.Signals{ProbeNamespace: o.PlaceholderNamespace, MetalLBNamespace: o.MetalLBNamespace, Controller: sel}
}

func metallbObjects() []client.Object {
	gvks := []schema.GroupVersionKind{params.IPAddressPoolGVK, params.L2AdvertisementGVK, params.BGPAdvertisementGVK}
	out := make([]client.Object, 0, len(gvks))
	for _, gvk := range gvks {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		out = append(out, u)
	}
	return out
}

// The capabilities the framework finds by type assertion: a slip in one of
// their signatures would turn it off without a word.
var (
	_ driver.Backend    = (*Backend)(nil)
	_ driver.Holder     = (*Backend)(nil)
	_ driver.Sharer     = (*Backend)(nil)
	_ driver.Retrier    = (*Backend)(nil)
	_ driver.Releaser   = (*Backend)(nil)
	_ driver.Watcher    = (*Backend)(nil)
	_ driver.Gate       = (*Backend)(nil)
	_ driver.Importer   = (*Backend)(nil)
	_ driver.Handoverer = (*Backend)(nil)
)

// Backend implements driver.Backend with MetalLB: placeholder Services hold
// reservations in MetalLB's own books, and metallb.io/loadBalancerIPs pins
// workloads.
type Backend struct {
	client.Client
	opts    Options
	metrics *metrics

	// Holds gives the placeholders (Holds.Set, written through the gate)
	// the role of holds.
	placeholder.Holds
	buried   placeholder.Deletions
	contests contests
	secret   *placeholder.Secret
	recorder recorder.EventRecorder
	// gate is MetalLB's catch-up: Client fails writes to Services while
	// it is shut.
	*catchup.Gate
}

// Setup registers the MetalLB driver on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.PlaceholderNamespace == "" || opts.MetalLBNamespace == "" {
		return fmt.Errorf("the placeholder and MetalLB namespaces must be set")
	}
	ctx := context.Background()
	m := newMetrics()
	gate := catchup.New(mgr.GetClient(), opts.PlaceholderNamespace, opts.TrustMetalLBFor)
	if opts.TrustMetalLBAlways {
		gate.TrustAlways()
	}
	gated := gate.Client(mgr.GetClient())
	set := &placeholder.Set{Client: gated, Namespace: opts.PlaceholderNamespace,
		Labels: map[string]string{v1alpha1.LabelManagedBy: params.ManagedByValue},
		Pin:    annotationLoadBalancerIPs, Allocator: "MetalLB"}
	b := &Backend{Client: gated, Gate: gate, opts: opts, metrics: m, Holds: placeholder.Holds{Set: set},
		secret:   &placeholder.Secret{Reader: mgr.GetAPIReader(), Namespace: opts.PlaceholderNamespace, Clock: opts.Driver.Clock},
		recorder: mgr.GetEventRecorder(v1alpha1.ProvisionerMetalLB)}
	if err := b.setupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := b.observePlaceholders(ctx, mgr); err != nil {
		return err
	}
	opts.Driver.Provisioner = b.Provisioner()
	if err := controllers.Setup(mgr, b, opts.Driver); err != nil {
		return err
	}
	if err := gate.Setup(mgr, opts.signals()); err != nil {
		return err
	}
	if err := b.setupPhantoms(mgr); err != nil {
		return err
	}
	parking := driver.NewParking(b)
	orphans := &placeholder.Orphans{Set: b.Set, Provisioner: b.Provisioner()}
	return orphans.Controller(mgr).WatchesRawSource(parking.Source()).
		Complete(manager.RetryConflicts(parking.Wrap(orphans)))
}

// Provisioner is the MetalLB driver's name.
func (b *Backend) Provisioner() string { return v1alpha1.ProvisionerMetalLB }

// Watches wakes the driver's controllers on placeholder and MetalLB changes.
func (b *Backend) Watches() driver.Watches {
	objs := metallbObjects()
	classes := make([]driver.Watch, 0, len(objs))
	for _, obj := range objs {
		// MetalLB writes a pool's status on every allocation; only what the
		// driver renders matters.
		classes = append(classes, driver.Watch{Object: obj,
			Handler:    handler.EnqueueRequestsFromMapFunc(b.classesToRerender),
			Predicates: []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})}})
	}
	classes = append(classes, b.nodeWatch())
	w := b.Set.Watches()
	// A yielded address that its holder has, or that left the ledger, lets
	// the placeholder that gave it back ask again.
	w.Claims = append(w.Claims,
		driver.Watch{Object: &corev1.Service{}, Handler: handler.EnqueueRequestsFromMapFunc(b.claimsAwaiting)},
		driver.Watch{Object: &v1alpha1.IPAddress{}, Handler: handler.EnqueueRequestsFromMapFunc(b.claimsAwaiting),
			Predicates: []predicate.Predicate{manager.DeleteOnly()}})
	w.Classes = classes
	return w
}

// classesToRerender maps a MetalLB object to the class that owns it, or, for
// a pool someone else wrote, to every class this driver serves: its ranges
// may now overlap theirs.
func (b *Backend) classesToRerender(ctx context.Context, o client.Object) []reconcile.Request {
	if class := o.GetLabels()[v1alpha1.LabelClass]; class != "" && o.GetLabels()[v1alpha1.LabelManagedBy] == params.ManagedByValue {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: class}}}
	}
	return manager.RequestsByIndex(ctx, b, &v1alpha1.IPAddressClassList{}, manager.IndexClassByProvisioner, b.Provisioner())
}
