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

package placeholder

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// Orphans deletes allocation placeholders that nothing needs any more before
// an IPAddress recorded their address.
//
// Design: an allocation placeholder is owned by nothing until the address it
// reserved is recorded and the hold adopts it. If, in that window, its claim
// disappears (or is re-created with another UID), is bound some other way
// (the core matched a static or returned address, or accepted a
// pre-binding), names an address, moves to another class or driver, or is
// Lost, nobody else would ever release the allocator's allocation, so this
// reconciler does: nothing holds an address the ledger does not record for
// longer than a pass. A claim Bound to the very address the placeholder
// reserved is no reason: the claim's change can reach the cache before the
// IPAddress does, and that placeholder is the hold to be. One the allocator
// gave an address its claim holds, unpinned, is pinned to it instead (the
// IPAddress can reach the cache before the pin, or the claim was bound to
// that address some other way before its hold existed).
type Orphans struct {
	Set *Set
	// Provisioner is the backend's: a claim served by another driver needs
	// none of its placeholders.
	Provisioner string
}

// Controller is the orphans controller, to be completed with the reconciler
// (wrapped as the backend needs): it runs over allocation placeholders and
// wakes on their claims' changes.
func (r *Orphans) Controller(mgr ctrl.Manager) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).Named("placeholder").
		For(&corev1.Service{}, builder.WithPredicates(predicate.NewPredicateFuncs(r.Set.IsAllocation))).
		Watches(&v1alpha1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(r.Set.AllocationsOfClaim))
}

// Reconcile runs one pass over an allocation placeholder.
func (r *Orphans) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ph := &corev1.Service{}
	if err := r.Set.Client.Get(ctx, req.NamespacedName, ph); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.Set.IsAllocation(ph) || len(ph.OwnerReferences) > 0 || ph.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	// Recorded meanwhile? Then the hold adopts it.
	if recorded, err := r.recordedForClaim(ctx, ph, ph.Annotations[v1alpha1.AnnotationAddressName]); err != nil || recorded {
		return ctrl.Result{}, err
	}
	// Given an address its claim holds, without the pin that makes the hold
	// adopt it: the pin has not reached the cache yet (the driver records the
	// IPAddress after it), or the claim was bound to that address some other
	// way before its hold existed. Pinning it makes it that address's hold.
	if ip, ok := IngressOfFamily(ph, v1alpha1.IPFamily(ph.Labels[v1alpha1.LabelFamily])); ok {
		if recorded, err := r.recordedForClaim(ctx, ph, ipaddr.ObjectName(ip)); err != nil || recorded {
			if err == nil {
				err = r.Set.Record(ctx, ph, ip)
			}
			return ctrl.Result{}, err
		}
	}
	why, err := r.unneeded(ctx, ph)
	if err != nil || why == "" {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("Deleting allocation placeholder nothing needs", "claim", ph.Annotations[v1alpha1.AnnotationClaim], "why", why)
	return ctrl.Result{}, r.Set.Delete(ctx, ph)
}

// unneeded says why no claim needs an allocation placeholder any more, or
// "" while its claim still waits for it.
func (r *Orphans) unneeded(ctx context.Context, ph *corev1.Service) (string, error) {
	ns, name, ok := SplitKey(ph.Annotations[v1alpha1.AnnotationClaim])
	if !ok {
		return "it names no claim", nil
	}
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Set.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, claim); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return "", err
		}
		return "its claim is gone", nil
	}
	family := v1alpha1.IPFamily(ph.Labels[v1alpha1.LabelFamily])
	class := claim.ClassName()
	switch {
	case string(claim.UID) != ph.Labels[v1alpha1.LabelClaimUID]:
		return "its claim was re-created", nil
	case claim.DeletionTimestamp != nil:
		return "its claim is being deleted", nil
	case claim.Annotations[v1alpha1.AnnotationProvisioner] != r.Provisioner:
		return "its claim is served by another driver now", nil
	case claim.Spec.AddressName != "":
		return "its claim names an address", nil
	case claim.Status.Phase == v1alpha1.ClaimBound && (lists(claim, ph.Annotations[v1alpha1.AnnotationAddressName]) || lists(claim, assignedName(ph, family))):
		// Bound to the address this placeholder reserved, or was given,
		// which the cache has not shown yet (the claim's change can arrive
		// before the address's): it is the hold to be. Deleting it would
		// leave the address free in the allocator until a new hold got it.
		return "", nil
	case claim.Status.Phase == v1alpha1.ClaimBound || claim.Status.Phase == v1alpha1.ClaimLost:
		return "its claim is " + string(claim.Status.Phase), nil
	case class != ph.Labels[v1alpha1.LabelClass]:
		return "its claim moved to class " + class, nil
	case claim.AdmittedTo() != class:
		return "its claim is not admitted to class " + class, nil
	case !slices.Contains(claim.Spec.Family.Families(), family):
		return "its claim no longer asks for " + string(family), nil
	}
	list := &v1alpha1.IPAddressList{}
	if err := r.Set.Client.List(ctx, list, client.MatchingFields{manager.IndexAddressByClaim: claim.ClaimKey()}); err != nil {
		return "", err
	}
	for _, a := range list.Items {
		if ref := a.Spec.ClaimRef; ref.UID == claim.UID && a.Family() == family {
			return "its claim has an " + string(family) + " address already", nil
		}
	}
	return "", nil
}

// assignedName is the name of the IPAddress for the address of family the
// allocator gave the placeholder, "" while it gave none.
func assignedName(ph *corev1.Service, family v1alpha1.IPFamily) string {
	if ip, ok := IngressOfFamily(ph, family); ok {
		return ipaddr.ObjectName(ip)
	}
	return ""
}

// recordedForClaim reports whether the IPAddress name exists with the
// placeholder's claim in its claimRef.
func (r *Orphans) recordedForClaim(ctx context.Context, ph *corev1.Service, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	a := &v1alpha1.IPAddress{}
	if err := r.Set.Client.Get(ctx, client.ObjectKey{Name: name}, a); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return a.Spec.ClaimRef != nil && string(a.Spec.ClaimRef.UID) == ph.Labels[v1alpha1.LabelClaimUID], nil
}

// lists reports whether the claim's status names the IPAddress name.
func lists(claim *v1alpha1.IPAddressClaim, name string) bool {
	return name != "" && slices.ContainsFunc(claim.Status.Addresses, func(a v1alpha1.ClaimedAddress) bool { return a.Name == name })
}
