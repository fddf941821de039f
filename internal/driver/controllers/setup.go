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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// Field indexes of the driver's cache. Every lookup goes through one.
const (
	indexAddressByClaim       = manager.IndexAddressByClaim
	indexAddressByIP          = manager.IndexAddressByIP
	indexAddressByClass       = manager.IndexAddressByClass
	indexAddressByAssociation = "driver.addressByAssociation"
	indexServiceByIngressIP   = driver.IndexServiceByIngressIP
	indexServiceByClaim       = driver.IndexServiceByClaim
	indexPendingClaimByClass  = "driver.pendingClaimByClass"
)

// Setup registers the driver's indexes and controllers for backend on mgr.
func Setup(mgr ctrl.Manager, backend driver.Backend, opts driver.Options) error {
	ctx := context.Background()
	clk := manager.ClockOrReal(opts.Clock)
	if err := setupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("setting up field indexes: %w", err)
	}
	name := opts.Provisioner
	if name == "" {
		return fmt.Errorf("no provisioner named in the driver's options")
	}
	switch opts.Handoff {
	case "", driver.HandoffAuto, driver.HandoffGap:
	default:
		return fmt.Errorf("unknown handoff mode %q: want %s or %s", opts.Handoff, driver.HandoffAuto, driver.HandoffGap)
	}
	d := &base{Client: mgr.GetClient(), live: mgr.GetAPIReader(), backend: backend, provisioner: name,
		recorder: mgr.GetEventRecorder(eventSource(name)), clock: clk, metrics: newMetrics(),
		carrierFinalizer: v1alpha1.DriverCarrierFinalizer(name)}
	if s, ok := backend.(driver.Sharer); ok && opts.Handoff != driver.HandoffGap {
		d.sharer = s
	}
	d.retrier, _ = backend.(driver.Retrier)
	d.gate, _ = backend.(driver.Gate)
	if err := d.metrics.countAddresses(ctx, mgr); err != nil {
		return err
	}
	d.ingress = newIngressLog(clk, d.metrics.unheld.Observe, d.inLedger)
	if err := d.ingress.follow(ctx, mgr); err != nil {
		return err
	}
	copts := controller.Options{MaxConcurrentReconciles: max(opts.Concurrency, 1)}
	var w driver.Watches
	if watcher, ok := backend.(driver.Watcher); ok {
		w = watcher.Watches()
	}

	if err := (&ClaimReconciler{base: d}).setupWithManager(mgr, copts, w.Claims); err != nil {
		return fmt.Errorf("setting up the claim controller: %w", err)
	}
	if err := (&AddressReconciler{base: d}).setupWithManager(mgr, copts, w.Addresses); err != nil {
		return fmt.Errorf("setting up the ipaddress controller: %w", err)
	}
	if err := (&ServiceReconciler{base: d}).setupWithManager(mgr, copts, w.Services); err != nil {
		return fmt.Errorf("setting up the service controller: %w", err)
	}
	if err := (&ClassReconciler{base: d}).setupWithManager(mgr, copts, w.Classes); err != nil {
		return fmt.Errorf("setting up the class controller: %w", err)
	}
	return nil
}

func addWatches(b *builder.Builder, ws []driver.Watch) *builder.Builder {
	for _, w := range ws {
		b = b.Watches(w.Object, w.Handler, builder.WithPredicates(w.Predicates...))
	}
	return b
}

// parked completes a controller whose passes may change the backend: the
// passes the backend's Gate turns away run again once it opens.
func (d *base) parked(b *builder.Builder, r reconcile.Reconciler) error {
	p := driver.NewParking(d.backend)
	if p != nil {
		b = b.WatchesRawSource(p.Source())
	}
	return b.Complete(manager.RetryConflicts(p.Wrap(r)))
}

func eventSource(provisioner string) string {
	// A qualified name of at most 63 characters, as events.k8s.io wants.
	if len(provisioner) > 63 {
		return provisioner[:63]
	}
	return provisioner
}

func setupIndexes(ctx context.Context, idx client.FieldIndexer) error {
	return manager.AddIndexes(ctx, idx, append(manager.AddressIndexes(), manager.ClassByProvisioner(),
		manager.Index{Object: &v1alpha1.IPAddress{}, Field: indexAddressByAssociation, Extract: func(o client.Object) []string {
			if w := o.(*v1alpha1.IPAddress).Status.AssociatedTo; w != nil {
				return []string{w.Namespace + "/" + w.Name}
			}
			return nil
		}},
		manager.Index{Object: &corev1.Service{}, Field: indexServiceByIngressIP, Extract: func(o client.Object) []string {
			return ingressIPs(o.(*corev1.Service))
		}},
		manager.Index{Object: &corev1.Service{}, Field: indexServiceByClaim, Extract: func(o client.Object) []string {
			if c := o.GetAnnotations()[v1alpha1.AnnotationIPAddressClaim]; c != "" {
				return []string{o.GetNamespace() + "/" + c}
			}
			return nil
		}},
		manager.Index{Object: &v1alpha1.IPAddressClaim{}, Field: indexPendingClaimByClass, Extract: func(o client.Object) []string {
			c := o.(*v1alpha1.IPAddressClaim)
			if c.Status.Phase == v1alpha1.ClaimBound || c.Status.Phase == v1alpha1.ClaimLost || c.Spec.AddressName != "" {
				return nil
			}
			if class := c.ClassName(); class != "" {
				return []string{class}
			}
			return nil
		}},
	)...)
}

// ingressIPs are the addresses a Service carries, as its load balancer
// reports them.
func ingressIPs(s *corev1.Service) []string {
	var ips []string
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			ips = append(ips, in.IP)
		}
	}
	return ips
}

func (d *base) stampedForUs(o client.Object) bool {
	return o.GetAnnotations()[v1alpha1.AnnotationProvisioner] == d.provisioner
}

func (d *base) servedByUs(o client.Object) bool {
	return o.(*v1alpha1.IPAddressClass).Spec.Provisioner == d.provisioner
}

func ingressChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return fmt.Sprint(ingressIPs(e.ObjectOld.(*corev1.Service))) != fmt.Sprint(ingressIPs(e.ObjectNew.(*corev1.Service)))
	}}
}

// changed passes creations, deletions, and updates that change what key
// reads of an object.
func changed(key func(client.Object) string) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return key(e.ObjectOld) != key(e.ObjectNew) }}
}

// bindingOf is what provisioning reads of an address.
func bindingOf(o client.Object) string {
	a := o.(*v1alpha1.IPAddress)
	ref := ""
	if a.Spec.ClaimRef != nil {
		ref = a.Spec.ClaimRef.Key() + "/" + string(a.Spec.ClaimRef.UID)
	}
	return fmt.Sprint(ref, a.DeletionTimestamp != nil)
}

// associationOf is what the association pass reads of an address.
func associationOf(o client.Object) string {
	a := o.(*v1alpha1.IPAddress)
	return fmt.Sprint(bindingOf(o), a.Status.Phase, a.Status.AssociatedTo)
}
