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
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// ClaimReconciler provisions addresses for the claims the core admitted to
// a class of this driver.
//
// Design: for each family a stamped claim misses, the backend reserves an
// address (the backend is the allocator of record; the driver never picks an
// IP), and the driver records it as an IPAddress pre-bound to the claim,
// named after the IP so that the API server refuses a second object for one
// address. Every step is idempotent and keyed by claim UID and family, so a
// crash between any two steps converges on the next pass. Claims naming an
// address (spec.addressName) are never provisioned for; neither are claims
// that were Bound (a Lost claim waits for its own address).
type ClaimReconciler struct{ *base }

// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddresses,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddresses/status,verbs=patch
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddresses/finalizers,verbs=update
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs one provisioning pass over a claim.
func (r *ClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		if apierrors.IsNotFound(err) {
			r.metrics.ledgerState(req.String(), "", false)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.wantsProvisioning(claim) {
		r.metrics.ledgerState(req.String(), "", false)
		return ctrl.Result{}, nil
	}
	class, err := r.servedClass(ctx, claim.AdmittedTo())
	if err != nil || class == nil {
		return ctrl.Result{}, err
	}
	bound, err := r.boundAddresses(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	have := map[v1alpha1.IPFamily]bool{}
	for _, a := range bound {
		have[a.Family()] = true
	}
	mismatched := false
	for _, family := range claim.Spec.Family.Families() {
		if have[family] {
			continue
		}
		if !slices.Contains(class.Status.Families, family) {
			// Not rendered yet, or not in the class's ranges: the core says
			// which on the claim, and nothing is reserved for it.
			log.FromContext(ctx).V(1).Info("The class serves no address of the family", "family", family, "families", class.Status.Families)
			continue
		}
		res, err := r.backend.Reserve(ctx, claim, class, family)
		if err != nil {
			r.waiting(claim, "Provision", err)
			return ctrl.Result{}, err
		}
		if !res.Address.IsValid() {
			log.FromContext(ctx).V(1).Info("Waiting for the backend", "family", family, "waiting", res.Waiting)
			continue
		}
		agreed, err := r.record(ctx, claim, class, res.Address)
		if err != nil {
			return ctrl.Result{}, err
		}
		mismatched = mismatched || !agreed
	}
	r.metrics.ledgerState(req.String(), class.Name, mismatched)
	return ctrl.Result{}, nil
}

// wantsProvisioning: stamped for this driver and admitted by the core to
// the class it asks for (the stamp routes, the status proves), alive,
// naming no address, and never Bound.
func (r *ClaimReconciler) wantsProvisioning(c *v1alpha1.IPAddressClaim) bool {
	return r.stampedForUs(c) && c.AdmittedTo() != "" && c.DeletionTimestamp == nil && c.Spec.AddressName == "" &&
		c.Status.Phase != v1alpha1.ClaimBound && c.Status.Phase != v1alpha1.ClaimLost
}

// record creates the IPAddress for a reserved address, pre-bound to the
// claim, and hands the backend's reservation over to it. It reports false
// when the ledger already records the address for someone else.
func (r *ClaimReconciler) record(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass, ip netip.Addr) (bool, error) {
	policy := class.Spec.ReclaimPolicy
	if policy == "" {
		policy = v1alpha1.ReclaimRetain
	}
	a := &v1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:       ipaddr.ObjectName(ip),
			Finalizers: []string{v1alpha1.DriverTeardownFinalizer(r.provisioner)},
		},
		Spec: v1alpha1.IPAddressSpec{
			Address:       ip.String(),
			ClassName:     class.Name,
			ReclaimPolicy: policy,
			ClaimRef:      &v1alpha1.ClaimReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID},
			Source:        v1alpha1.AddressSource{FromClass: &v1alpha1.FromClassSource{}},
		},
	}
	err := r.Create(ctx, a)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Provisioned address", "ipaddress", a.Name, "address", a.Spec.Address)
		r.recorder.Eventf(claim, a, corev1.EventTypeNormal, v1alpha1.EventProvisioned, "Provision",
			"Provisioned IPAddress %s (%s) from class %s", a.Name, a.Spec.Address, class.Name)
		r.metrics.provisioned.WithLabelValues(class.Name).Inc()
	case apierrors.IsAlreadyExists(err):
		existing := &v1alpha1.IPAddress{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(a), existing); err != nil {
			return false, err
		}
		if ref := existing.Spec.ClaimRef; ref == nil || ref.Key() != claim.ClaimKey() || ref.UID != claim.UID {
			// The ledger and the backend disagree: never fight over it.
			holder := "nobody"
			if ref != nil {
				holder = fmt.Sprintf("claim %s (uid %s)", ref.Key(), ref.UID)
			}
			msg := fmt.Sprintf("The backend reserved %s for this claim, but IPAddress %s already exists, bound to %s; an admin must reconcile the two",
				ip, a.Name, holder)
			r.recorder.Eventf(claim, existing, corev1.EventTypeWarning, v1alpha1.EventLedgerMismatch, "Provision", "%s", msg)
			r.recorder.Eventf(existing, claim, corev1.EventTypeWarning, v1alpha1.EventLedgerMismatch, "Provision", "%s", msg)
			r.metrics.mismatches.WithLabelValues(class.Name).Inc()
			return false, nil
		}
		a = existing
	default:
		return false, err
	}
	_, err = r.hold(ctx, a, class, ip)
	return err == nil, err
}
