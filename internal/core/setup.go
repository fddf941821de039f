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
	"flag"
	"fmt"
	"slices"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// EventSource is the reporting controller name on the core's events.
const EventSource = "address-controller"

// Options tune the core's controllers.
type Options struct {
	// ClaimConcurrency, AddressConcurrency and ClassConcurrency bound how
	// many objects of each kind are reconciled at once.
	ClaimConcurrency   int
	AddressConcurrency int
	ClassConcurrency   int
	// Clock tells the time: releaseDelay, phase transitions, conditions.
	// Tests inject a fake one; nil means the real clock.
	Clock clock.PassiveClock
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.ClaimConcurrency, "claim-concurrency", 4, "How many IPAddressClaims are reconciled at once.")
	fs.IntVar(&o.AddressConcurrency, "address-concurrency", 4, "How many IPAddresses are reconciled at once.")
	fs.IntVar(&o.ClassConcurrency, "class-concurrency", 1, "How many IPAddressClasses are reconciled at once.")
}

// Setup registers the core's field indexes and controllers on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	ctx := context.Background()
	clk := manager.ClockOrReal(opts.Clock)
	if err := setupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("setting up field indexes: %w", err)
	}
	available, pending, m := newAvailableSet(), newPendingBinds(clk.Now), newMetrics(clk.Now)
	if err := observeInformers(ctx, mgr, pending, m); err != nil {
		return err
	}
	if err := observeAccessInformers(ctx, mgr, m); err != nil {
		return err
	}
	rec := mgr.GetEventRecorder(EventSource)

	claims := &ClaimReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec, Clock: clk,
		available: available, pending: pending, metrics: m}
	if err := claims.SetupWithManager(mgr, opts.ClaimConcurrency); err != nil {
		return fmt.Errorf("setting up the claim controller: %w", err)
	}
	addresses := &AddressReconciler{Client: mgr.GetClient(), Recorder: rec, Clock: clk}
	if err := addresses.SetupWithManager(mgr, opts.AddressConcurrency); err != nil {
		return fmt.Errorf("setting up the address controller: %w", err)
	}
	classes := &ClassReconciler{Client: mgr.GetClient(), Recorder: rec, Clock: clk}
	if err := classes.SetupWithManager(mgr, opts.ClassConcurrency); err != nil {
		return fmt.Errorf("setting up the class controller: %w", err)
	}
	return nil
}

// observeInformers feeds the pending bindings and the gauges from the
// informers, event by event. The available set is fed by the claim
// controller's own address handler (addressEvents) instead: an informer runs
// each handler on a goroutine of its own, so a set fed here could lag behind
// the wake-up of a claim that then finds nothing to bind, and sleeps.
func observeInformers(ctx context.Context, mgr ctrl.Manager, pending *pendingBinds, m *metrics) error {
	if err := manager.Observe(ctx, mgr, manager.Events[*v1alpha1.IPAddress]{
		Add: func(a *v1alpha1.IPAddress) {
			pending.observe(a, false)
			m.observeAddress(nil, a)
		},
		Update: func(old, a *v1alpha1.IPAddress) {
			pending.observe(a, false)
			m.observeAddress(old, a)
		},
		Delete: func(a *v1alpha1.IPAddress) {
			pending.observe(a, true)
			m.observeAddress(a, nil)
		},
	}); err != nil {
		return err
	}
	if err := manager.Observe(ctx, mgr, manager.Changes(m.observeClaim)); err != nil {
		return err
	}
	return manager.Observe(ctx, mgr, manager.Events[*v1alpha1.IPAddressClass]{
		Add:    func(c *v1alpha1.IPAddressClass) { m.observeClassBack(c.Name) },
		Delete: func(c *v1alpha1.IPAddressClass) { m.observeClassGone(c.Name) },
	})
}

// specOrMetadataChanged passes creations, deletions, and updates of spec,
// labels, annotations, the deletion timestamp, or the finalizers of an
// object being deleted (a driver's teardown done): not a manager's own
// status writes.
func specOrMetadataChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() ||
				e.ObjectNew.GetDeletionTimestamp() != nil && !slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers())
		}})
}

// phaseChanged passes updates that change an address's phase, which the
// driver may do.
func phaseChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.(*v1alpha1.IPAddress).Status.Phase != e.ObjectNew.(*v1alpha1.IPAddress).Status.Phase
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
