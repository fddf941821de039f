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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// AddressReconciler derives each address's phase and reclaims addresses whose
// claim is gone.
//
// Design: the phase is a function of claimRef and the claim at its other end,
// recomputed every pass. An address whose claim is missing, or is a newer
// claim of the same name, is reclaimed at once by its own reclaimPolicy; that
// is the safety net behind the claim's finalizer, and why an address created
// before its claim is reclaimed. Conflict and Lost belong to the driver and
// are never overwritten. A Released address returns to Available once it has
// been Released for its class's releaseDelay, unless held; the pass asks to
// be woken when the delay ends rather than polling. The protection finalizer
// goes only when no live claim holds the address.
type AddressReconciler struct {
	client.Client
	Recorder recorder.EventRecorder
	Clock    clock.PassiveClock
}

// Reconcile runs one pass over an address.
func (r *AddressReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &v1alpha1.IPAddress{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if a.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, a)
	}
	if !controllerutil.ContainsFinalizer(a, v1alpha1.FinalizerAddressProtection) {
		controllerutil.AddFinalizer(a, v1alpha1.FinalizerAddressProtection)
		if err := r.Update(ctx, a); err != nil {
			return ctrl.Result{}, err
		}
	}

	obs, err := r.observe(ctx, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := decideAddress(obs)
	now := metav1.NewTime(r.Clock.Now())
	switch {
	case d.skip:
		return ctrl.Result{}, nil
	case d.reclaim:
		if err := reclaimAddress(ctx, r.Client, r.Recorder, a, d.message, now); err != nil || a.DeletionTimestamp != nil {
			return ctrl.Result{}, err
		}
	default:
		wasDuplicate := isDuplicate(a)
		if err := writeAddressStatus(ctx, r.Client, a, addressStatus(a, d, now)); err != nil {
			return ctrl.Result{}, err
		}
		if isDuplicate(a) && !wasDuplicate {
			log.FromContext(ctx).Info("Address is a duplicate", "keeper", obs.duplicateOf, "address", a.Spec.Address)
			r.Recorder.Eventf(a, nil, corev1.EventTypeWarning, v1alpha1.EventDuplicateAddress, "Deduplicate", "%s", d.message)
		}
	}
	return r.releaseAfterDelay(ctx, a)
}

// observe gathers what the decision needs: whether spec.address is usable
// and unique, and the state of the claim at the other end of claimRef.
func (r *AddressReconciler) observe(ctx context.Context, a *v1alpha1.IPAddress) (addressObservation, error) {
	obs := addressObservation{address: a}
	if _, err := a.IP(); err != nil {
		obs.invalid = fmt.Sprintf("spec.address %q is not an IP address", a.Spec.Address)
		return obs, nil
	}
	dup, err := manager.DuplicateOf(ctx, r.Client, a)
	if err != nil || dup != "" {
		obs.duplicateOf = dup
		return obs, err
	}
	ref := a.Spec.ClaimRef
	if ref == nil {
		return obs, nil
	}
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, claim); err != nil {
		if apierrors.IsNotFound(err) {
			obs.claim = claimMissing
			return obs, nil
		}
		return obs, err
	}
	switch {
	case ref.UID != "" && ref.UID != claim.UID:
		obs.claim, obs.liveUID = claimUIDMismatch, string(claim.UID)
	case claim.DeletionTimestamp != nil:
		obs.claim = claimDeleting
	case ref.UID == "":
		obs.claim = claimPreBinding
		obs.refusal, err = r.preBindingRefusal(ctx, claim, a)
	default:
		obs.claim = claimLive
	}
	return obs, err
}

// preBindingRefusal judges a pre-binding the way the claim will, so that the
// address can say why it is not accepted.
func (r *AddressReconciler) preBindingRefusal(ctx context.Context, claim *v1alpha1.IPAddressClaim, a *v1alpha1.IPAddress) (string, error) {
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{indexAddressByClaim: claim.ClaimKey()}); err != nil {
		return "", err
	}
	bound := map[v1alpha1.IPFamily]*v1alpha1.IPAddress{}
	for i := range list.Items {
		b := &list.Items[i]
		if b.Spec.ClaimRef.UID == claim.UID && b.Status.Phase != v1alpha1.AddressLost {
			bound[b.Family()] = b
		}
	}
	return preBindingRefusal(claim, claim.ClassName(), a, bound, ""), nil
}

// releaseAfterDelay returns a Released address to the pool once its class's
// releaseDelay has passed, or asks to be woken when it will have.
func (r *AddressReconciler) releaseAfterDelay(ctx context.Context, a *v1alpha1.IPAddress) (ctrl.Result, error) {
	if a.Status.Phase != v1alpha1.AddressReleased {
		return ctrl.Result{}, nil
	}
	class := &v1alpha1.IPAddressClass{}
	if err := r.Get(ctx, client.ObjectKey{Name: a.Spec.ClassName}, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	due, after := releaseDue(a, class.Spec.ReleaseDelay, r.Clock.Now())
	if !due {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	was := a.Spec.ClaimRef.Key()
	a.Spec.ClaimRef = nil
	if err := r.Update(ctx, a); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("Returned released address to the pool", "releaseDelay", class.Spec.ReleaseDelay.Duration)
	r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, v1alpha1.EventReleaseDelayExpired, "Recycle",
		"Released for longer than the releaseDelay (%s) of class %s; cleared claimRef (was %s)",
		class.Spec.ReleaseDelay.Duration, class.Name, was)
	return ctrl.Result{}, nil
}

// finalize lets a deleted address go once no live claim holds it, after
// its driver's teardown: the two finalizers' removals are writes of the
// same list, and made at once one of them is refused. The driver's removal
// wakes this pass.
func (r *AddressReconciler) finalize(ctx context.Context, a *v1alpha1.IPAddress) error {
	if !controllerutil.ContainsFinalizer(a, v1alpha1.FinalizerAddressProtection) || inDriverTeardown(a) {
		return nil
	}
	if ref := a.Spec.ClaimRef; ref != nil && ref.UID != "" {
		claim := &v1alpha1.IPAddressClaim{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, claim)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil && claim.UID == ref.UID && claim.DeletionTimestamp == nil {
			r.Recorder.Eventf(a, claim, corev1.EventTypeWarning, v1alpha1.EventDeletionBlocked, "Delete",
				"IPAddress %s stays until claim %s, which holds it, is deleted", a.Name, ref.Key())
			return nil
		}
	}
	controllerutil.RemoveFinalizer(a, v1alpha1.FinalizerAddressProtection)
	return client.IgnoreNotFound(r.Update(ctx, a))
}

// isDuplicate: the core's verdict on a is that another IPAddress keeps its
// spec.address.
func isDuplicate(a *v1alpha1.IPAddress) bool {
	c := meta.FindStatusCondition(a.Status.Conditions, v1alpha1.ConditionBound)
	return c != nil && c.Reason == v1alpha1.ReasonDuplicate
}

// inDriverTeardown: a driver's teardown finalizer is still on a.
func inDriverTeardown(a *v1alpha1.IPAddress) bool {
	return slices.ContainsFunc(a.Finalizers, func(f string) bool { return strings.HasSuffix(f, v1alpha1.FinalizerDriverTeardownSuffix) })
}

// reclaimAddress applies an address's reclaim policy: Retain makes it
// Released (claimRef stays), Delete deletes it (its driver's finalizer tears
// the backend down first). A driver-owned phase is left alone.
func reclaimAddress(ctx context.Context, c client.Client, rec recorder.EventRecorder, a *v1alpha1.IPAddress, why string, now metav1.Time) error {
	if a.Spec.ReclaimPolicy == v1alpha1.ReclaimDelete {
		if a.DeletionTimestamp != nil {
			return nil
		}
		if err := c.Delete(ctx, a, client.Preconditions{UID: &a.UID}); err != nil {
			return client.IgnoreNotFound(err)
		}
		a.DeletionTimestamp = &now
		rec.Eventf(a, nil, corev1.EventTypeNormal, v1alpha1.EventReclaimed, "Reclaim", "Deleted (reclaimPolicy Delete): %s", why)
		return nil
	}
	if a.Status.Phase == v1alpha1.AddressConflict || a.Status.Phase == v1alpha1.AddressLost {
		return nil
	}
	d := addressDecision{phase: v1alpha1.AddressReleased, reason: v1alpha1.ReasonReleased, message: why + "; retained by reclaimPolicy Retain"}
	wasReleased := a.Status.Phase == v1alpha1.AddressReleased
	if err := writeAddressStatus(ctx, c, a, addressStatus(a, d, now)); err != nil {
		return err
	}
	if !wasReleased {
		rec.Eventf(a, nil, corev1.EventTypeNormal, v1alpha1.EventReclaimed, "Reclaim", "Released (reclaimPolicy Retain): %s", why)
	}
	return nil
}

// writeAddressStatus writes st if it differs from the address's status. The
// optimistic lock keeps the driver's concurrent changes from being lost.
func writeAddressStatus(ctx context.Context, c client.Client, a *v1alpha1.IPAddress, st v1alpha1.IPAddressStatus) error {
	_, err := manager.UpdateStatus(ctx, c, a, func(a *v1alpha1.IPAddress) { a.Status = st })
	return err
}
