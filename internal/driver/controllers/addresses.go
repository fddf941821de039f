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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// AddressReconciler keeps the driver's side of every address of its classes.
//
// Design: level-triggered on every pass, the backend holds the address if
// and only if it exists and no live workload carries it: a hold deleted out
// of band comes back, and an association whose Service is gone, or whose
// claim binding ended, is dissolved, which re-arms the hold. Any Service that
// carries the address without entitlement (the backend's own hold, or the
// Service naming the address's live claim) turns the address Conflict; once
// none does, the phase goes back to the core. Addresses this driver created
// carry its finalizer, so the backend state goes before the object does.
type AddressReconciler struct{ *base }

// Placeholders live in the driver's own namespace, which Kubebuilder's
// markers call "system"; each driver's chart names the one it is given.
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=create;delete,namespace=system

// Reconcile runs one pass of the driver over an address.
func (r *AddressReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &v1alpha1.IPAddress{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	class, err := r.servedClass(ctx, a.Spec.ClassName)
	if err != nil {
		return ctrl.Result{}, err
	}
	finalizer := v1alpha1.DriverTeardownFinalizer(r.provisioner)
	if class == nil && !controllerutil.ContainsFinalizer(a, finalizer) {
		return ctrl.Result{}, nil // not ours
	}
	if a.DeletionTimestamp != nil {
		return ctrl.Result{}, r.teardown(ctx, a, finalizer)
	}

	if dup, err := manager.DuplicateOf(ctx, r.Client, a); err != nil || dup != "" {
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.standAside(ctx, a, dup)
	}

	bindingLive, reclaiming, err := r.binding(ctx, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	carrier, live, err := r.carrier(ctx, a, bindingLive)
	if err != nil {
		return ctrl.Result{}, err
	}
	if a.Status.AssociatedTo != nil && !live {
		// Dissolving writes status; the next pass re-arms the hold (after a
		// shared handoff, the hold is back first).
		_, err := r.dissociate(ctx, a, carrier, "the association ended")
		return ctrl.Result{}, err
	}

	obs := holdObservation{address: a, now: metav1.NewTime(r.clock.Now())}
	ip, ipErr := a.IP()
	var recheck time.Duration
	switch {
	case live:
		if err := r.carry(ctx, a, class, carrier, &obs); err != nil {
			return ctrl.Result{}, err
		}
	case reclaiming:
		// The core deletes the address as it reclaims the claim; a hold
		// made now would only be torn down again a moment later.
		obs.hold = driver.HoldState{Reason: driver.ReasonReclaiming,
			Message: "Its claim is being deleted and its reclaimPolicy is Delete: the address goes with the claim"}
	case class != nil && ipErr == nil:
		if obs.hold, err = r.hold(ctx, a, class, ip); err != nil {
			return ctrl.Result{}, err
		}
		if ref := a.Spec.ClaimRef; !bindingLive && ref != nil && ref.UID != "" {
			// The hold may keep the ended binding's key for a late pin;
			// it takes its own when the grace ends.
			recheck, _ = driver.LatePinGraceLeft(a, obs.now.Time)
		}
		if !obs.hold.Held && !obs.hold.Lost && obs.hold.Reason == driver.ReasonHoldPending {
			if err := r.retry(ctx, a, nil, []netip.Addr{ip}, false); err != nil {
				return ctrl.Result{}, err
			}
		}
	case class != nil:
		obs.hold = driver.HoldState{Reason: v1alpha1.ReasonInvalidAddress, Message: ipErr.Error()}
	}
	if awaitingCore(a) {
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	if obs.wrongful, err = r.wrongfulHolders(ctx, a, bindingLive); err != nil {
		return ctrl.Result{}, err
	}
	before := a.DeepCopy()
	st := driverStatus(obs)
	if err := r.patchAddressStatus(ctx, a, func(s *v1alpha1.IPAddressStatus) { *s = st }); err != nil {
		return ctrl.Result{}, err
	}
	r.reportTransitions(ctx, before, a, obs)
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// awaitingCore: the core has yet to make its first pass over a, which
// writes a's status (its phase and Bound condition). The driver writes its
// conditions after that write, which wakes it: written at the same moment,
// one of the two would be refused.
func awaitingCore(a *v1alpha1.IPAddress) bool { return a.Status.Phase == "" }

// standAside keeps the driver out of a duplicate: it holds nothing for it,
// reports no conflict over it, and hands back a phase it set before it knew,
// so that the core's Pending (Duplicate) is the one word on it.
func (r *AddressReconciler) standAside(ctx context.Context, a *v1alpha1.IPAddress, first string) error {
	if err := r.backend.Release(ctx, a); err != nil {
		return err
	}
	if awaitingCore(a) {
		return nil
	}
	obs := holdObservation{address: a, now: metav1.NewTime(r.clock.Now()),
		hold: driver.HoldState{Reason: v1alpha1.ReasonDuplicate, Message: "IPAddress " + first + " keeps this address; the driver holds nothing for this one"}}
	st := driverStatus(obs)
	return r.patchAddressStatus(ctx, a, func(s *v1alpha1.IPAddressStatus) { *s = st })
}

// carry keeps a live association going: until the carrier of a shared
// handoff reports the address, the hold keeps it, and a pin the backend has
// not honoured is asked again once nothing stands in its way. The holds go
// by the carrier's pass alone (ServiceReconciler.associate), once the
// carrier reports the address or, for a gap handoff, before its pin.
func (r *AddressReconciler) carry(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass,
	carrier *corev1.Service, obs *holdObservation) error {
	h := r.handoffFor(carrier)
	obs.carrier, obs.handoff = carrier, h
	obs.carried = slices.Contains(ingressIPs(carrier), a.Spec.Address)
	pinned, byDriver := r.backend.PinnedTo(carrier)
	if h.shared && !obs.carried && class != nil {
		ip, err := a.IP()
		if err != nil {
			return nil
		}
		if obs.hold, err = r.hold(ctx, a, class, ip); err != nil {
			return err
		}
	}
	if obs.carried || !byDriver || !slices.Contains(pinned, mustIP(a)) {
		return nil
	}
	return r.retry(ctx, a, carrier, pinned, h.shared)
}

func mustIP(a *v1alpha1.IPAddress) netip.Addr {
	ip, _ := a.IP()
	return ip
}

// binding reads the address's claim (see Binding).
func (d *base) binding(ctx context.Context, a *v1alpha1.IPAddress) (live, reclaiming bool, err error) {
	return driver.Binding(ctx, d, a)
}

// carrier returns the Service the address is associated with, if it still
// exists, and whether the association is live: same Service, still naming
// the claim, and the binding live.
func (r *AddressReconciler) carrier(ctx context.Context, a *v1alpha1.IPAddress, bindingLive bool) (*corev1.Service, bool, error) {
	w := a.Status.AssociatedTo
	if w == nil {
		return nil, false, nil
	}
	svc := &corev1.Service{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, svc); err != nil {
		return nil, false, client.IgnoreNotFound(err)
	}
	if w.UID != "" && svc.UID != w.UID {
		return nil, false, nil // a new Service of the same name
	}
	live := bindingLive && svc.DeletionTimestamp == nil && svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Annotations[v1alpha1.AnnotationIPAddressClaim] == a.Spec.ClaimRef.Name
	return svc, live, nil
}

// wrongfulHolders are the Services whose load balancer reports the address
// without their being entitled to it. A Service the cache accuses is read
// again from the API server before it is named: the Services' cache may lag
// behind the addresses' (separate watches), and the pass that ends an
// association marks the Service as letting go before it clears
// associatedTo, so a pass woken by the cleared association can see the
// Service as it was before the mark.
func (r *AddressReconciler) wrongfulHolders(ctx context.Context, a *v1alpha1.IPAddress, bindingLive bool) ([]*corev1.Service, error) {
	list := &corev1.ServiceList{}
	if err := r.List(ctx, list, client.MatchingFields{indexServiceByIngressIP: a.Spec.Address}); err != nil {
		return nil, err
	}
	var out []*corev1.Service
	for i := range list.Items {
		if s := &list.Items[i]; !entitled(r.backend, s, a, bindingLive) {
			now := &corev1.Service{}
			err := r.live.Get(ctx, client.ObjectKeyFromObject(s), now)
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			if err == nil && slices.Contains(ingressIPs(now), a.Spec.Address) && !entitled(r.backend, now, a, bindingLive) {
				out = append(out, now)
			}
		}
	}
	return out, nil
}

// reportTransitions emits the events an admin must see when the driver moves
// an address into or out of Conflict or Lost, or its carrier drops it or
// reports it again.
func (r *AddressReconciler) reportTransitions(ctx context.Context, before, after *v1alpha1.IPAddress, obs holdObservation) {
	wasDropped := meta.IsStatusConditionTrue(before.Status.Conditions, v1alpha1.ConditionDropped)
	isDropped := meta.IsStatusConditionTrue(after.Status.Conditions, v1alpha1.ConditionDropped)
	// An address reported again after a drop was not handed over.
	if prev, cur := meta.FindStatusCondition(before.Status.Conditions, v1alpha1.ConditionAssociated),
		meta.FindStatusCondition(after.Status.Conditions, v1alpha1.ConditionAssociated); cur != nil && isCarried(cur.Reason) &&
		(prev == nil || !isCarried(prev.Reason)) && !wasDropped {
		r.metrics.handoffTime.Observe(obs.now.Sub(cur.LastTransitionTime.Time).Seconds())
		if obs.handoff.shared {
			r.metrics.unheld.Observe(0)
		}
	}
	rightful := "no claim"
	if ref := after.Spec.ClaimRef; ref != nil {
		rightful = "claim " + ref.Key()
	}
	switch s := obs.carrier; {
	case isDropped && !wasDropped:
		log.FromContext(ctx).Info("Associated Service no longer reports the address", "service", s.Namespace+"/"+s.Name)
		r.recorder.Eventf(after, s, corev1.EventTypeWarning, v1alpha1.EventAddressDropped, "DetectDrop",
			"Service %s/%s no longer reports %s, which it carried; it stays bound to %s and associated with the Service, and goes to no one else: see the Service's events for why its load balancer refused it",
			s.Namespace, s.Name, after.Spec.Address, rightful)
		r.recorder.Eventf(s, after, corev1.EventTypeWarning, v1alpha1.EventAddressDropped, "DetectDrop",
			"The load balancer no longer reports %s, IPAddress %s of %s, which this Service carried; its other events say why", after.Spec.Address, after.Name, rightful)
	case wasDropped && !isDropped && s != nil:
		r.recorder.Eventf(after, s, corev1.EventTypeNormal, v1alpha1.EventAddressReportedAgain, "DetectDrop",
			"Service %s/%s reports %s again", s.Namespace, s.Name, after.Spec.Address)
	}
	was, now := before.Status.Phase, after.Status.Phase
	switch {
	case now == v1alpha1.AddressConflict && was != now:
		log.FromContext(ctx).Info("Address held by another Service", "offenders", serviceNames(obs.wrongful))
		r.metrics.conflicts.WithLabelValues(after.Spec.ClassName).Inc()
		for _, s := range obs.wrongful {
			r.recorder.Eventf(after, s, corev1.EventTypeWarning, v1alpha1.EventAddressConflict, "DetectConflict",
				"%s is held by Service %s/%s, which is not entitled to it; it belongs to %s", after.Spec.Address, s.Namespace, s.Name, rightful)
			r.recorder.Eventf(s, after, corev1.EventTypeWarning, v1alpha1.EventAddressConflict, "DetectConflict",
				"This Service holds %s, which is IPAddress %s of %s; release it (remove the pin) or reference that claim", after.Spec.Address, after.Name, rightful)
		}
	case was == v1alpha1.AddressConflict && now != was:
		r.recorder.Eventf(after, nil, corev1.EventTypeNormal, v1alpha1.EventConflictResolved, "ResolveConflict",
			"No Service holds %s wrongfully any more; phase handed back as %s", after.Spec.Address, now)
	case now == v1alpha1.AddressLost && was != now:
		r.recorder.Eventf(after, nil, corev1.EventTypeWarning, v1alpha1.EventAddressLost, "Hold", "%s", obs.hold.Message)
	}
}

// teardown releases the backend state of an address this driver created:
// its hold, and any pin the driver wrote on a Service carrying it.
func (r *AddressReconciler) teardown(ctx context.Context, a *v1alpha1.IPAddress, finalizer string) error {
	if !controllerutil.ContainsFinalizer(a, finalizer) {
		return nil
	}
	if w := a.Status.AssociatedTo; w != nil {
		svc := &corev1.Service{}
		err := r.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, svc)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil && (w.UID == "" || svc.UID == w.UID) {
			_, pinned := r.backend.PinnedTo(svc)
			held := pinned || controllerutil.ContainsFinalizer(svc, r.carrierFinalizer)
			if err := r.letGo(ctx, svc); err != nil {
				return err
			}
			if held {
				r.recorder.Eventf(a, svc, corev1.EventTypeNormal, v1alpha1.EventDissociated, "Dissociate",
					"No longer carried by Service %s/%s: the address is being deleted", w.Namespace, w.Name)
			}
		}
	}
	if err := r.backend.Release(ctx, a); err != nil {
		return err
	}
	orig := a.DeepCopy()
	controllerutil.RemoveFinalizer(a, finalizer)
	return client.IgnoreNotFound(r.Patch(ctx, a, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}
