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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// ServiceReconciler attaches claims' addresses to the Services that name them.
//
// Design: a Service annotated with a claim of its own namespace gets that
// claim's addresses. The association is recorded on each address
// (status.associatedTo) first; then, by a shared handoff where the backend
// can share the addresses with their holds, the Service is pinned into the
// holds' sharing and the holds go once it reports the addresses; elsewhere,
// by a gap handoff, the holds go and the Service is pinned once they are
// gone. Each step is idempotent and the recorded association drives the
// rest after a crash. Removing the annotation, deleting the Service or
// ending the binding reverses it: after a shared handoff the hold returns
// first; the driver withdraws only a pin it wrote, clears the association,
// and the address stays bound. A request the driver cannot honour (no
// such claim, claim not bound, claim of another driver, Service not a
// LoadBalancer, families that do not fit, the claim already carried by a
// live Service, a hand-written pin naming other addresses) changes nothing
// and is reported as a Warning event on the Service.
type ServiceReconciler struct {
	*base
	refused refusals
}

// Reconcile runs one association pass over a Service.
func (r *ServiceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := &corev1.Service{}
	if err := r.Get(ctx, req.NamespacedName, svc); err != nil {
		// A deleted Service: the addresses it carried notice on their pass.
		if apierrors.IsNotFound(err) {
			r.refused.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	err := r.reconcile(ctx, svc)
	if svc.Annotations[v1alpha1.AnnotationIPAddressClaim] != "" {
		r.waiting(svc, "Associate", err)
	}
	return ctrl.Result{}, err
}

// reconcile is the pass over svc, which exists.
func (r *ServiceReconciler) reconcile(ctx context.Context, svc *corev1.Service) error {
	current, err := r.carriedBy(ctx, svc)
	if err != nil {
		return err
	}
	claimName := svc.Annotations[v1alpha1.AnnotationIPAddressClaim]
	key := client.ObjectKeyFromObject(svc)
	if claimName == "" || svc.DeletionTimestamp != nil {
		r.refused.forget(key)
		why := "the Service no longer names a claim"
		if svc.DeletionTimestamp != nil {
			why = "the Service is being deleted"
		}
		done, err := r.dissociateAll(ctx, current, svc, why)
		if err != nil || !done {
			return err
		}
		return r.letGoUncarried(ctx, svc)
	}

	claim, addrs, refusal, err := r.request(ctx, svc, claimName)
	if err != nil {
		return err
	}
	// Addresses of another claim (the annotation moved) are let go first.
	var stale []*v1alpha1.IPAddress
	for _, a := range current {
		if claim != nil && slices.ContainsFunc(addrs, func(b *v1alpha1.IPAddress) bool { return b.Name == a.Name }) {
			continue
		}
		// Where nothing is to be associated instead, an address whose
		// binding ended (its claim being deleted or gone) is let go by its
		// own pass, which the same change wakes: two passes writing one
		// dissociation at once, one of them is refused.
		if claim == nil {
			if live, _, err := r.binding(ctx, a); err != nil {
				return err
			} else if !live {
				continue
			}
		}
		stale = append(stale, a)
	}
	if done, err := r.dissociateAll(ctx, stale, svc, "the Service names another claim"); err != nil || !done {
		return err
	}
	if refusal == waitForRelease {
		return nil // the address's association clearing wakes this pass
	}
	if refusal != "" {
		if r.refused.report(key, svc.UID, refusal, r.clock.Now()) {
			log.FromContext(ctx).Info("Association refused", "claim", claimName, "why", refusal)
			r.recorder.Eventf(svc, nil, corev1.EventTypeWarning, v1alpha1.EventAssociationRefused, "Associate", "%s", refusal)
		}
		if len(current) > 0 {
			return nil // each address's own pass lets svc go
		}
		return r.letGoUncarried(ctx, svc)
	}
	r.refused.forget(key)
	return r.associate(ctx, svc, claim, addrs)
}

// letGoUncarried withdraws the driver's pin and carrier finalizer from svc,
// which carries no address: left by a pass that crashed before removing
// them, or by an association written while the address's own pass, as the
// claim went, had already ended it and found no pin to withdraw (the two
// passes run at once). The Service's pass alone sees that state, so it
// owns this repair; it writes nothing where there is nothing of the
// driver's. The addresses listed as carried by svc are the cache's view,
// which can lag behind this process's own writes, so each pinned address
// is read again first: one still recording svc is let go by its own pass,
// in the order its handoff needs.
func (r *ServiceReconciler) letGoUncarried(ctx context.Context, svc *corev1.Service) error {
	pinned, byDriver := r.backend.PinnedTo(svc)
	if byDriver && svc.DeletionTimestamp == nil {
		for _, ip := range pinned {
			if carried, err := r.recordsCarrier(ctx, ip.String(), svc); err != nil || carried {
				return err
			}
		}
		log.FromContext(ctx).Info("Withdrawing the driver's pin from a Service that carries no address", "pinned", pinned)
	}
	return r.letGo(ctx, svc)
}

// recordsCarrier says whether an IPAddress of ip, as this process last
// wrote or read it, records svc as its carrier.
func (r *ServiceReconciler) recordsCarrier(ctx context.Context, ip string, svc *corev1.Service) (bool, error) {
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{indexAddressByIP: ip}); err != nil {
		return false, err
	}
	for i := range list.Items {
		a := &v1alpha1.IPAddress{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(&list.Items[i]), a); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, err
		}
		if w := a.Status.AssociatedTo; w != nil && w.Namespace == svc.Namespace && w.Name == svc.Name && (w.UID == "" || w.UID == svc.UID) {
			return true, nil
		}
	}
	return false, nil
}

// dissociateAll ends svc's association with as; false while one of them
// waits for its hold.
func (r *ServiceReconciler) dissociateAll(ctx context.Context, as []*v1alpha1.IPAddress, svc *corev1.Service, why string) (bool, error) {
	all := true
	for _, a := range as {
		done, err := r.dissociate(ctx, a, svc, why)
		if err != nil {
			return false, err
		}
		all = all && done
	}
	return all, nil
}

// waitForRelease is request's answer while a stale holder lets go of the
// claim's addresses: not a refusal, nothing to report.
const waitForRelease = "wait for the stale holder to let go"

// request checks what a Service asks for. It returns the claim and its
// addresses, or why the request cannot be honoured (claim nil).
func (r *ServiceReconciler) request(ctx context.Context, svc *corev1.Service, claimName string) (*v1alpha1.IPAddressClaim, []*v1alpha1.IPAddress, string, error) {
	refuse := func(format string, args ...any) (*v1alpha1.IPAddressClaim, []*v1alpha1.IPAddress, string, error) {
		return nil, nil, fmt.Sprintf(format, args...), nil
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return refuse("Service is of type %s; only a LoadBalancer Service can carry the addresses of IPAddressClaim %s", svc.Spec.Type, claimName)
	}
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: claimName}, claim); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return nil, nil, "", err
		}
		return refuse("IPAddressClaim %s not found in namespace %s", claimName, svc.Namespace)
	}
	if p := claim.Annotations[v1alpha1.AnnotationProvisioner]; p != r.provisioner {
		if p == "" {
			return refuse("IPAddressClaim %s has no class resolved yet", claimName)
		}
		return refuse("IPAddressClaim %s is served by %s, not by %s", claimName, p, r.provisioner)
	}
	if claim.Status.Phase != v1alpha1.ClaimBound {
		return refuse("IPAddressClaim %s is not Bound (phase %s)", claimName, phaseText(claim.Status.Phase))
	}
	// A claim or address on its way out ends the binding, as the address
	// pass sees it too: associating now would re-pin the Service after the
	// teardown withdrew the pin, and nothing would withdraw it again.
	if claim.DeletionTimestamp != nil {
		return refuse("IPAddressClaim %s is being deleted", claimName)
	}
	addrs, err := r.boundAddresses(ctx, claim)
	if err != nil {
		return nil, nil, "", err
	}
	for _, a := range addrs {
		if a.DeletionTimestamp != nil {
			return refuse("IPAddress %s of IPAddressClaim %s is being deleted", a.Name, claimName)
		}
		// The stamp routes; the address's class decides.
		if class, err := r.servedClass(ctx, a.Spec.ClassName); err != nil || class == nil {
			if err != nil {
				return nil, nil, "", err
			}
			return refuse("IPAddress %s of IPAddressClaim %s is of class %s, which %s does not serve", a.Name, claimName, a.Spec.ClassName, r.provisioner)
		}
	}
	if reason := familyMismatch(svc, claim, addrs); reason != "" {
		return refuse("%s", reason)
	}
	for _, a := range addrs {
		if w := a.Status.AssociatedTo; w != nil && (w.Namespace != svc.Namespace || w.Name != svc.Name || (w.UID != "" && w.UID != svc.UID)) {
			holder, live, err := r.liveCarrier(ctx, a)
			if err != nil {
				return nil, nil, "", err
			}
			if live {
				return refuse("IPAddressClaim %s is already carried by Service %s/%s; a claim's addresses go to one Service at a time",
					claimName, holder.Namespace, holder.Name)
			}
			// A stale holder: take over, once it has let go.
			done, err := r.dissociate(ctx, a, holder, fmt.Sprintf("Service %s/%s takes over", svc.Namespace, svc.Name))
			if err != nil {
				return nil, nil, "", err
			}
			if !done {
				return nil, nil, waitForRelease, nil
			}
		}
	}
	if pinned, byDriver := r.backend.PinnedTo(svc); len(pinned) > 0 && !byDriver && !sameAddresses(pinned, ips(addrs)) {
		return refuse("Service is pinned by hand to %v, not to the addresses of IPAddressClaim %s (%v); the driver never overwrites a hand-written pin",
			pinned, claimName, ips(addrs))
	}
	return claim, addrs, "", nil
}

// liveCarrier returns the Service an address is associated with and whether
// it still carries it by right.
func (r *ServiceReconciler) liveCarrier(ctx context.Context, a *v1alpha1.IPAddress) (*corev1.Service, bool, error) {
	w := a.Status.AssociatedTo
	svc := &corev1.Service{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, svc); err != nil {
		return nil, false, client.IgnoreNotFound(err)
	}
	live := (w.UID == "" || svc.UID == w.UID) && svc.DeletionTimestamp == nil &&
		svc.Annotations[v1alpha1.AnnotationIPAddressClaim] == a.Spec.ClaimRef.Name
	return svc, live, nil
}

// familyMismatch says why a Service's IP families cannot carry a claim's
// addresses, or "".
func familyMismatch(svc *corev1.Service, claim *v1alpha1.IPAddressClaim, addrs []*v1alpha1.IPAddress) string {
	want := claim.Spec.Family.Families()
	var have []v1alpha1.IPFamily
	for _, f := range svc.Spec.IPFamilies {
		if f == corev1.IPv4Protocol {
			have = append(have, v1alpha1.IPv4)
		} else {
			have = append(have, v1alpha1.IPv6)
		}
	}
	slices.Sort(have)
	if len(addrs) != len(want) {
		return fmt.Sprintf("IPAddressClaim %s holds %d of the %d addresses it asks for", claim.Name, len(addrs), len(want))
	}
	if !slices.Equal(have, want) {
		return fmt.Sprintf("Service has IP families %v but IPAddressClaim %s is %s; make the Service's spec.ipFamilies and ipFamilyPolicy match",
			svc.Spec.IPFamilies, claim.Name, claim.Spec.Family)
	}
	return ""
}

func sameAddresses(a, b []netip.Addr) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, netip.Addr.Compare)
	slices.SortFunc(b, netip.Addr.Compare)
	return slices.Equal(a, b)
}

func phaseText(p v1alpha1.IPAddressClaimPhase) string {
	if p == "" {
		return "not yet processed"
	}
	return string(p)
}
