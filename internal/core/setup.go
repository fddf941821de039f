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

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
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
	err := ctrl.NewControllerManagedBy(mgr).Named("ipaddressclaim").
		For(&v1alpha1.IPAddressClaim{}, builder.WithPredicates(specOrMetadataChanged())).
		Watches(&v1alpha1.IPAddress{}, claims.addressEvents()).
		Watches(&v1alpha1.IPAddressClass{}, handler.EnqueueRequestsFromMapFunc(claims.claimsForClass), builder.WithPredicates(specOrMetadataChanged())).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(claims.unadmittedInNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&v1alpha1.IPAddressClassUsage{}, handler.EnqueueRequestsFromMapFunc(claims.unadmittedForLedger), builder.WithPredicates(ledgerShrank())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.ClaimConcurrency, 1)}).
		Complete(manager.RetryConflicts(claims))
	if err != nil {
		return fmt.Errorf("setting up the claim controller: %w", err)
	}

	addresses := &AddressReconciler{Client: mgr.GetClient(), Recorder: rec, Clock: clk}
	err = ctrl.NewControllerManagedBy(mgr).Named("ipaddress").
		For(&v1alpha1.IPAddress{}, builder.WithPredicates(predicate.Or(specOrMetadataChanged(), phaseChanged()))).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(addresses.sameIP), builder.WithPredicates(manager.CreateOrDelete())).
		Watches(&v1alpha1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(addresses.addressesForClaim)).
		Watches(&v1alpha1.IPAddressClass{}, handler.EnqueueRequestsFromMapFunc(addresses.releasedOfClass)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.AddressConcurrency, 1)}).
		Complete(manager.RetryConflicts(addresses))
	if err != nil {
		return fmt.Errorf("setting up the address controller: %w", err)
	}

	classes := &ClassReconciler{Client: mgr.GetClient(), Recorder: rec, Clock: clk}
	err = ctrl.NewControllerManagedBy(mgr).Named("ipaddressclass").
		For(&v1alpha1.IPAddressClass{}).
		Watches(&v1alpha1.IPAddressClassUsage{}, handler.EnqueueRequestsFromMapFunc(classOfLedger)).
		Watches(&v1alpha1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(classOfAddress), builder.WithPredicates(manager.DeleteOnly())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.ClassConcurrency, 1)}).
		Complete(manager.RetryConflicts(classes))
	if err != nil {
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
	addrInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddress{})
	if err != nil {
		return err
	}
	_, err = addrInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			a := obj.(*v1alpha1.IPAddress)
			pending.observe(a, false)
			m.observeAddress(nil, a)
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, a := oldObj.(*v1alpha1.IPAddress), newObj.(*v1alpha1.IPAddress)
			pending.observe(a, false)
			m.observeAddress(old, a)
		},
		DeleteFunc: func(obj any) {
			if a, ok := deletedObject[*v1alpha1.IPAddress](obj); ok {
				pending.observe(a, true)
				m.observeAddress(a, nil)
			}
		},
	})
	if err != nil {
		return err
	}
	claimInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClaim{})
	if err != nil {
		return err
	}
	_, err = claimInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observeClaim(nil, obj.(*v1alpha1.IPAddressClaim)) },
		UpdateFunc: func(o, n any) { m.observeClaim(o.(*v1alpha1.IPAddressClaim), n.(*v1alpha1.IPAddressClaim)) },
		DeleteFunc: func(obj any) {
			if c, ok := deletedObject[*v1alpha1.IPAddressClaim](obj); ok {
				m.observeClaim(c, nil)
			}
		},
	})
	if err != nil {
		return err
	}
	classInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClass{})
	if err != nil {
		return err
	}
	_, err = classInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { m.observeClassBack(obj.(*v1alpha1.IPAddressClass).Name) },
		DeleteFunc: func(obj any) {
			if c, ok := deletedObject[*v1alpha1.IPAddressClass](obj); ok {
				m.observeClassGone(c.Name)
			}
		},
	})
	return err
}

// deletedObject unwraps the tombstone an informer hands over when it missed
// a deletion.
func deletedObject[T any](obj any) (T, bool) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(T)
	return o, ok
}

// specOrMetadataChanged passes creations, deletions, and updates of spec,
// labels, annotations or the deletion timestamp: not a manager's own status
// writes.
func specOrMetadataChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
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

// addressEvents wakes, for an address event, the claims its claimRef names
// (before and after), the claims naming it in spec.addressName, and, only when
// it has just become Available, the claims waiting for its class and family:
// binding an Available address must not wake every waiting claim. It feeds
// the available set first, in the same goroutine, so that a claim it wakes
// finds the address there.
func (r *ClaimReconciler) addressEvents() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	wake := func(ctx context.Context, q queue, old, new *v1alpha1.IPAddress) {
		var reqs []reconcile.Request
		for _, a := range []*v1alpha1.IPAddress{old, new} {
			if a != nil && a.Spec.ClaimRef != nil {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: a.Spec.ClaimRef.Namespace, Name: a.Spec.ClaimRef.Name}})
			}
		}
		a := new
		if a == nil {
			a = old
		}
		reqs = append(reqs, r.claimsByIndex(ctx, indexClaimByAddressName, a.Name)...)
		if isAvailable(new) && !isAvailable(old) {
			reqs = append(reqs, r.claimsByIndex(ctx, indexPendingClaim, pendingFamilyKey(new.Spec.ClassName, new.Family()))...)
		}
		for _, req := range reqs {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			a := e.Object.(*v1alpha1.IPAddress)
			r.available.observe(nil, a)
			wake(ctx, q, nil, a)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			old, new := e.ObjectOld.(*v1alpha1.IPAddress), e.ObjectNew.(*v1alpha1.IPAddress)
			r.available.observe(old, new)
			if claimSees(old) != claimSees(new) {
				wake(ctx, q, old, new)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if a, ok := deletedObject[*v1alpha1.IPAddress](e.Object); ok {
				r.available.observe(a, nil)
				wake(ctx, q, a, nil)
			}
		},
	}
}

// claimSees is what a claim pass reads of an address; other changes (the
// driver's conditions, say) leave every claim as it was.
func claimSees(a *v1alpha1.IPAddress) string {
	ref := ""
	if a.Spec.ClaimRef != nil {
		ref = a.Spec.ClaimRef.Key() + "/" + string(a.Spec.ClaimRef.UID)
	}
	return fmt.Sprint(ref, a.Status.Phase, a.DeletionTimestamp != nil)
}

// claimsForClass wakes the claims waiting on a class, and those with no class
// resolved yet, whose default may have changed.
func (r *ClaimReconciler) claimsForClass(ctx context.Context, obj client.Object) []reconcile.Request {
	return append(r.claimsByIndex(ctx, indexPendingClaim, pendingClassKey(obj.GetName())),
		r.claimsByIndex(ctx, indexPendingClaim, pendingClassKey(""))...)
}

func (r *ClaimReconciler) claimsByIndex(ctx context.Context, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, r, &v1alpha1.IPAddressClaimList{}, index, key)
}

// addressesForClaim wakes the addresses whose claimRef names the claim.
func (r *AddressReconciler) addressesForClaim(ctx context.Context, obj client.Object) []reconcile.Request {
	return addressesByIndex(ctx, r.Client, indexAddressByClaim, obj.GetNamespace()+"/"+obj.GetName())
}

// sameIP wakes the other addresses with the same spec.address, whose
// duplicate verdict may change.
func (r *AddressReconciler) sameIP(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, req := range addressesByIndex(ctx, r.Client, indexAddressByIP, obj.(*v1alpha1.IPAddress).Spec.Address) {
		if req.Name != obj.GetName() {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// releasedOfClass wakes a class's Released addresses: its releaseDelay may
// have changed.
func (r *AddressReconciler) releasedOfClass(ctx context.Context, obj client.Object) []reconcile.Request {
	families := []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6}
	reqs := make([]reconcile.Request, 0, len(families))
	for _, f := range families {
		reqs = append(reqs, addressesByIndex(ctx, r.Client, indexAddressByClassFamilyPhase,
			classFamilyPhaseKey(obj.GetName(), f, v1alpha1.AddressReleased))...)
	}
	return reqs
}

func addressesByIndex(ctx context.Context, c client.Reader, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, c, &v1alpha1.IPAddressList{}, index, key)
}

// classOfAddress wakes the class of a deleted address: a class being deleted
// waits for its last address.
func classOfAddress(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.(*v1alpha1.IPAddress).Spec.ClassName}}}
}
