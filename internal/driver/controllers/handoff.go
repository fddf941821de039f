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
	"encoding/json"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// Handoff modes, as metrics and events name them.
const (
	modeShared = "shared"
	modeGap    = "gap"
)

// handoff says how addresses move between their holds and a Service.
//
// Shared: the Service joins the holds' sharing and is pinned while the holds
// still hold; the holds go once the backend reports the addresses on the
// Service; on the way back the holds return, sharing, before the pin goes.
// The backend never counts the addresses free.
//
// Gap: the holds go first and the Service is pinned once the driver's cache
// shows them gone; on the way back the pin goes first and the holds follow.
// In between, the backend counts the addresses free.
type handoff struct {
	shared bool
	// reason and message say why a handoff is a gap handoff.
	reason, message string
}

func (h handoff) mode() string {
	if h.shared {
		return modeShared
	}
	return modeGap
}

// handoffFor decides how svc takes and gives back addresses.
func (d *base) handoffFor(svc *corev1.Service) handoff {
	if d.sharer == nil {
		if _, ok := d.backend.(driver.Sharer); ok {
			return handoff{reason: driver.ReasonGapForced, message: "the driver runs with --handoff=gap"}
		}
		return handoff{reason: driver.ReasonNoSharing, message: "the backend cannot share an address between its hold and a workload"}
	}
	if pinned, byDriver := d.backend.PinnedTo(svc); len(pinned) > 0 && !byDriver {
		return handoff{reason: driver.ReasonHandWrittenPin, message: "the Service is pinned by hand, and the driver writes no pin of its own on it"}
	}
	if ok, reason, msg := d.sharer.Shareable(svc); !ok {
		return handoff{reason: reason, message: msg}
	}
	return handoff{shared: true}
}

// pinnedAs reports whether svc carries exactly the pin the driver would
// write for want with key (and, for a shared pin, the carrier finalizer).
func (d *base) pinnedAs(svc *corev1.Service, want []netip.Addr, key string) bool {
	pinned, byDriver := d.backend.PinnedTo(svc)
	if !byDriver || !slices.Equal(pinned, want) {
		return false
	}
	if key == "" {
		return d.sharer == nil || d.sharer.SharedKey(svc) == ""
	}
	return d.sharer.SharedKey(svc) == key && controllerutil.ContainsFinalizer(svc, d.carrierFinalizer)
}

// carries reports whether svc's load balancer reports every one of ips.
func carries(svc *corev1.Service, ips []netip.Addr) bool {
	have := ingressIPs(svc)
	for _, ip := range ips {
		if !slices.Contains(have, ip.String()) {
			return false
		}
	}
	return len(ips) > 0
}

// retryToken is the retry token of a Service pinned to ips (see ingressLog).
func (d *base) retryToken(ctx context.Context, ips []netip.Addr) (string, error) {
	tokens := make([]string, 0, len(ips))
	for _, ip := range ips {
		reps, err := d.reporters(ctx, ip.String())
		if err != nil {
			return "", err
		}
		tokens = append(tokens, d.ingress.retryToken(ip.String(), reps))
	}
	return strings.Join(tokens, "."), nil
}

// retrying gives ctx, for a Retrier, the retry token of ips' state, for
// the Hold or Pin it is passed to.
func (d *base) retrying(ctx context.Context, ips []netip.Addr) (context.Context, error) {
	if d.retrier == nil {
		return ctx, nil
	}
	token, err := d.retryToken(ctx, ips)
	if err != nil {
		return ctx, err
	}
	return driver.WithRetryToken(ctx, token), nil
}

// hold asks the backend to hold a, which records ip, for class.
func (d *base) hold(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass, ip netip.Addr) (driver.HoldState, error) {
	ctx, err := d.retrying(ctx, []netip.Addr{ip})
	if err != nil {
		return driver.HoldState{}, err
	}
	return d.backend.Hold(ctx, a, class)
}

// pin pins svc as p says.
func (d *base) pin(ctx context.Context, svc *corev1.Service, p driver.Pin) error {
	ctx, err := d.retrying(ctx, p.Addresses)
	if err != nil {
		return err
	}
	return d.backend.Pin(ctx, svc, p)
}

// blocked reports whether a Service other than svc, which the backend would
// not let svc share with, reports one of ips. A Service the driver told to
// let go is no obstacle: the backend sees that before it sees the retry.
func (d *base) blocked(ctx context.Context, svc *corev1.Service, a *v1alpha1.IPAddress, ips []netip.Addr, shared bool) (bool, error) {
	for _, ip := range ips {
		reps, err := d.reporters(ctx, ip.String())
		if err != nil {
			return false, err
		}
		for _, r := range reps {
			switch {
			case svc != nil && r.UID == svc.UID:
			case releasing(d.backend, r):
			case shared && isHolder(d.backend, r, a):
			default:
				return true, nil
			}
		}
	}
	return false, nil
}

// retry asks the backend again for a pin it has not honoured, once nothing
// stands in the way: svc is the carrier, or nil for a's hold.
func (d *base) retry(ctx context.Context, a *v1alpha1.IPAddress, svc *corev1.Service, ips []netip.Addr, shared bool) error {
	if d.retrier == nil || len(ips) == 0 {
		return nil
	}
	if blocked, err := d.blocked(ctx, svc, a, ips, shared); err != nil || blocked {
		return err
	}
	token, err := d.retryToken(ctx, ips)
	if err != nil {
		return err
	}
	return d.retrier.Retry(ctx, a, svc, token)
}

// associate hands a claim's addresses to svc, by a shared handoff where the
// backend can share them with their holds, else by a gap handoff.
func (r *ServiceReconciler) associate(ctx context.Context, svc *corev1.Service, claim *v1alpha1.IPAddressClaim, addrs []*v1alpha1.IPAddress) error {
	h := r.handoffFor(svc)
	ref := &v1alpha1.WorkloadReference{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID}
	fresh := false
	for _, a := range addrs {
		if a.Status.AssociatedTo != nil {
			continue
		}
		fresh = true
		if err := r.patchAddressStatus(ctx, a, func(s *v1alpha1.IPAddressStatus) { s.AssociatedTo = ref }); err != nil {
			return err
		}
	}
	want := ips(addrs)
	if fresh {
		r.metrics.handoffs.WithLabelValues(claim.ClassName(), h.mode(), "associate").Inc()
		how := "a shared handoff: the hold keeps the address until the Service reports it"
		if !h.shared {
			how = "a gap handoff: " + h.message
		}
		log.FromContext(ctx).Info("Associated claim", "claim", claim.ClaimKey(), "addresses", want, "handoff", h.mode())
		r.recorder.Eventf(svc, claim, corev1.EventTypeNormal, v1alpha1.EventAssociated, "Associate",
			"Carries the addresses of IPAddressClaim %s: %v, by %s", claim.Name, want, how)
	}
	// request found every address of a class this driver serves.
	class, err := r.servedClass(ctx, addrs[0].Spec.ClassName)
	if err != nil || class == nil {
		return err
	}
	if h.shared {
		return r.associateShared(ctx, svc, claim, class, addrs, want)
	}
	released := true
	for _, a := range addrs {
		gone, err := unhold(ctx, r.backend, a)
		if err != nil {
			return err
		}
		released = released && gone
	}
	if !released {
		return nil // the hold's deletion wakes this pass again
	}
	if pinned, byDriver := r.backend.PinnedTo(svc); len(pinned) > 0 && !byDriver {
		return nil // a hand-written pin equal to the claim's addresses stays
	}
	if r.pinnedAs(svc, want, "") {
		return nil
	}
	return r.pin(ctx, svc, driver.Pin{Addresses: want, Class: class})
}

// associateShared pins svc into the holds' sharing, and lets the holds go
// once the backend gives svc the addresses.
func (r *ServiceReconciler) associateShared(ctx context.Context, svc *corev1.Service, claim *v1alpha1.IPAddressClaim,
	class *v1alpha1.IPAddressClass, addrs []*v1alpha1.IPAddress, want []netip.Addr) error {
	key, err := r.sharer.SharingKey(ctx, claim)
	if err != nil {
		return err
	}
	if !r.pinnedAs(svc, want, key) {
		return r.pin(ctx, svc, driver.Pin{Addresses: want, Class: class, SharingKey: key, Finalizer: r.carrierFinalizer})
	}
	if !carries(svc, want) {
		return nil // the load balancer's report wakes this pass
	}
	for _, a := range addrs {
		if _, err := unhold(ctx, r.backend, a); err != nil {
			return err
		}
	}
	return nil
}

// dissociate ends an association of a with svc (nil when the Service is
// gone). It reports false while it waits: after a shared handoff, the hold
// returns, sharing the address with svc, before svc's pin goes.
func (d *base) dissociate(ctx context.Context, a *v1alpha1.IPAddress, svc *corev1.Service, why string) (bool, error) {
	shared := false
	if svc != nil && d.holdReturnsFirst(svc, a) {
		// svc's pin covers all of its addresses (both of a Dual claim): it
		// goes only once every one of them is held again.
		carried, err := d.carriedBy(ctx, svc)
		if err != nil {
			return false, err
		}
		if !slices.ContainsFunc(carried, func(o *v1alpha1.IPAddress) bool { return o.UID == a.UID }) {
			carried = append(carried, a)
		}
		for _, o := range carried {
			held, wanted, err := d.holdBack(ctx, o, svc)
			if err != nil || !held {
				return false, err
			}
			shared = shared || wanted && o.UID == a.UID
		}
	}
	if svc != nil {
		if err := d.letGo(ctx, svc); err != nil {
			return false, err
		}
	}
	w := a.Status.AssociatedTo
	now := metav1.NewTime(d.clock.Now())
	err := d.patchAddressStatus(ctx, a, func(s *v1alpha1.IPAddressStatus) { dissociated(s, a.Generation, now) })
	if apierrors.IsNotFound(err) {
		return true, nil // the address is gone, and its association with it
	}
	if err != nil {
		return false, err
	}
	mode := modeGap
	if shared {
		mode = modeShared
		d.metrics.unheld.Observe(0)
	}
	d.metrics.handoffs.WithLabelValues(a.Spec.ClassName, mode, "dissociate").Inc()
	log.FromContext(ctx).Info("Dissociated address", "service", w.Namespace+"/"+w.Name, "why", why, "handoff", mode)
	var related runtime.Object
	if svc != nil {
		related = svc
	}
	d.recorder.Eventf(a, related, corev1.EventTypeNormal, v1alpha1.EventDissociated, "Dissociate",
		"No longer carried by Service %s/%s: %s; the backend holds it again (%s handoff)", w.Namespace, w.Name, why, mode)
	return true, nil
}

// holdBack brings a's hold back, sharing a with svc, where it must be
// back before svc's pin goes. held: it is (or need not be); wanted: it had
// to be.
func (d *base) holdBack(ctx context.Context, a *v1alpha1.IPAddress, svc *corev1.Service) (held, wanted bool, err error) {
	if !d.holdReturnsFirst(svc, a) || a.DeletionTimestamp != nil {
		return true, false, nil
	}
	_, reclaiming, err := d.binding(ctx, a)
	if err != nil || reclaiming {
		return err == nil, false, err
	}
	class, err := d.servedClass(ctx, a.Spec.ClassName)
	if err != nil || class == nil {
		return err == nil, false, err
	}
	ip, err := a.IP()
	if err != nil {
		return true, false, nil
	}
	st, err := d.hold(ctx, a, class, ip)
	if err != nil {
		return false, true, err
	}
	if !st.Held {
		// The hold's assignment wakes the address's pass and svc's.
		return false, true, d.retry(ctx, a, nil, []netip.Addr{ip}, true)
	}
	return true, true, nil
}

// carriedBy lists the addresses associated with svc.
func (d *base) carriedBy(ctx context.Context, svc *corev1.Service) ([]*v1alpha1.IPAddress, error) {
	list := &v1alpha1.IPAddressList{}
	if err := d.List(ctx, list, client.MatchingFields{indexAddressByAssociation: svc.Namespace + "/" + svc.Name}); err != nil {
		return nil, err
	}
	var out []*v1alpha1.IPAddress
	for i := range list.Items {
		if a := &list.Items[i]; a.Status.AssociatedTo.UID == "" || a.Status.AssociatedTo.UID == svc.UID {
			out = append(out, a)
		}
	}
	return out, nil
}

// holdReturnsFirst: svc carries a by a shared pin the backend can still
// share, so the hold can come back before the pin goes.
func (d *base) holdReturnsFirst(svc *corev1.Service, a *v1alpha1.IPAddress) bool {
	if d.sharer == nil || d.sharer.SharedKey(svc) == "" || !slices.Contains(ingressIPs(svc), a.Spec.Address) {
		return false
	}
	ok, _, _ := d.sharer.Shareable(svc)
	return ok
}

// letGo withdraws the driver's pin from svc and its carrier finalizer; of a
// Service being deleted, only the finalizer.
func (d *base) letGo(ctx context.Context, svc *corev1.Service) error {
	if svc.DeletionTimestamp == nil {
		return d.backend.Pin(ctx, svc, driver.Pin{Finalizer: d.carrierFinalizer})
	}
	return d.dropFinalizer(ctx, svc)
}

// dropFinalizer removes the carrier finalizer from svc, leaving any other.
func (d *base) dropFinalizer(ctx context.Context, svc *corev1.Service) error {
	if !controllerutil.ContainsFinalizer(svc, d.carrierFinalizer) {
		return nil
	}
	// The Service goes with its finalizer: the backend must hear of it.
	if d.gate != nil {
		if err := d.gate.Ready(ctx); err != nil {
			return err
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{d.carrierFinalizer}}})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(d.Patch(ctx, svc, client.RawPatch(types.StrategicMergePatchType, patch)))
}
