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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=local.sdn.cozystack.io,resources=ipaddressclassusages,verbs=get;list;watch;create;update;patch

// admittedBefore reports whether a claim went through admission already: it
// carries its class's provisioner stamp, or holds or held an address. Such a
// claim keeps what it has whatever the class's policy says now.
func admittedBefore(o *claimObservation) bool {
	c := o.claim
	return c.Annotations[v1alpha1.AnnotationProvisioner] == o.class.provisioner ||
		len(o.bound) > 0 || len(o.lost) > 0 ||
		c.Status.Phase == v1alpha1.ClaimBound || c.Status.Phase == v1alpha1.ClaimLost
}

// admit decides whether the claim may draw from its class and, under a
// limit, records it in the namespace's ledger. It returns why the claim
// waits, or nil once it is admitted. A lost race on the ledger surfaces as a
// conflict, and the pass runs again on the newer count.
func (r *ClaimReconciler) admit(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass) (*familyWait, error) {
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: claim.Namespace}, ns); err != nil {
		return nil, fmt.Errorf("reading the labels of namespace %s: %w", claim.Namespace, err)
	}
	req := accessRequest{claim: claim, class: class, namespaceLabels: ns.Labels}
	var stored *v1alpha1.IPAddressClassUsage
	if class.Spec.AddressesPerNamespace != nil {
		var err error
		if stored, err = r.readLedger(ctx, claim.Namespace, class.Name); err != nil {
			return nil, err
		}
		if req.ledger, err = r.syncLedger(ctx, stored, claim.Namespace, class); err != nil {
			return nil, err
		}
	}
	d := decideAccess(req)
	if d.verdict == accessRefused && d.reason == v1alpha1.ReasonClassLimitReached {
		// Before refusing, drop entries whose claims are gone for good.
		pruned, err := r.pruneLedger(ctx, req.ledger)
		if err != nil {
			return nil, err
		}
		if pruned != nil {
			if err := r.writeLedger(ctx, stored, pruned); err != nil {
				return nil, err
			}
			stored, req.ledger = pruned, pruned.DeepCopy()
			d = decideAccess(req)
		}
	}
	switch d.verdict {
	case accessRecord:
		next := req.ledger.DeepCopy()
		next.Spec.Claims = withEntry(next.Spec.Claims, v1alpha1.AdmittedClaim{Name: claim.Name, UID: claim.UID, Addresses: claimAddresses(claim)})
		next.Spec.Addresses = ledgerSum(next.Spec.Claims)
		if err := r.writeLedger(ctx, stored, next); err != nil {
			return nil, err
		}
		log.FromContext(ctx).Info("Admitted claim to its class", "ipaddressclass", class.Name,
			"addresses", next.Spec.Addresses, "limit", *class.Spec.AddressesPerNamespace)
	case accessRefused:
		if prev := boundReason(claim); prev != d.reason {
			event := v1alpha1.EventClassNotAllowed
			if d.reason == v1alpha1.ReasonClassLimitReached {
				event = v1alpha1.EventClassLimitReached
			}
			r.Recorder.Eventf(claim, class, corev1.EventTypeWarning, event, "Admit", "%s", d.message)
			if d.invalidSelector {
				r.Recorder.Eventf(class, claim, corev1.EventTypeWarning, v1alpha1.EventInvalidNamespaceSelector, "Admit",
					"Refused claim %s: %s", claim.ClaimKey(), d.message)
			}
		}
		return &familyWait{d.reason, d.message}, nil
	}
	return nil, nil
}

func boundReason(c *v1alpha1.IPAddressClaim) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == v1alpha1.ConditionBound {
			return cond.Reason
		}
	}
	return ""
}

// readLedger returns the namespace's ledger for a class from the cache, or
// nil if there is none.
func (r *ClaimReconciler) readLedger(ctx context.Context, namespace, class string) (*v1alpha1.IPAddressClassUsage, error) {
	l := &v1alpha1.IPAddressClassUsage{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: class}, l); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return l, nil
}

// syncLedger returns the ledger to decide on: the stored one (or a new,
// empty one) plus the claims of the namespace that were admitted before the
// class had a limit and are missing from it. Adding from the cache only ever
// raises the count, so a stale cache cannot let a claim through.
func (r *ClaimReconciler) syncLedger(ctx context.Context, stored *v1alpha1.IPAddressClassUsage, namespace string,
	class *v1alpha1.IPAddressClass) (*v1alpha1.IPAddressClassUsage, error) {
	l := stored.DeepCopy()
	if l == nil {
		l = &v1alpha1.IPAddressClassUsage{}
		l.Namespace, l.Name = namespace, class.Name
	}
	claims := &v1alpha1.IPAddressClaimList{}
	if err := r.List(ctx, claims, client.InNamespace(namespace), client.MatchingFields{indexClaimByClass: class.Name}); err != nil {
		return nil, err
	}
	l.Spec.Claims = missingEntries(l.Spec.Claims, claims.Items, class)
	l.Spec.Addresses = ledgerSum(l.Spec.Claims)
	return l, nil
}

// missingEntries adds to a ledger's entries the claims that hold the class's
// stamp or an address and are not in it yet.
func missingEntries(entries []v1alpha1.AdmittedClaim, claims []v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass) []v1alpha1.AdmittedClaim {
	have := map[types.UID]bool{}
	for _, e := range entries {
		have[e.UID] = true
	}
	out := entries
	for i := range claims {
		c := &claims[i]
		if have[c.UID] || c.DeletionTimestamp != nil || !holdsAdmission(c, class) {
			continue
		}
		out = withEntry(out, v1alpha1.AdmittedClaim{Name: c.Name, UID: c.UID, Addresses: claimAddresses(c)})
	}
	return out
}

// holdsAdmission reports, from a cached claim alone, whether it was admitted
// to class: stamped with its provisioner, or holding or having held an address.
func holdsAdmission(c *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass) bool {
	return c.Annotations[v1alpha1.AnnotationProvisioner] == class.Spec.Provisioner || len(c.Status.Addresses) > 0 ||
		c.Status.Phase == v1alpha1.ClaimBound || c.Status.Phase == v1alpha1.ClaimLost
}

// pruneLedger drops the entries of claims that no longer exist, asking the
// API server about any the cache does not show: a UID never comes back, so
// such an entry is safe to drop. It returns nil when nothing was dropped.
// Entries outlive their claims only when a claim's finalizer is removed by
// hand or its release raced its admission.
func (r *ClaimReconciler) pruneLedger(ctx context.Context, l *v1alpha1.IPAddressClassUsage) (*v1alpha1.IPAddressClassUsage, error) {
	gone := map[types.UID]bool{}
	for _, e := range l.Spec.Claims {
		c := &v1alpha1.IPAddressClaim{}
		err := r.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: e.Name}, c)
		if err == nil && c.UID == e.UID {
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: e.Name}, c); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if apierrors.IsNotFound(err) || c.UID != e.UID {
			gone[e.UID] = true
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	next := l.DeepCopy()
	next.Spec.Claims = withoutEntries(next.Spec.Claims, gone)
	next.Spec.Addresses = ledgerSum(next.Spec.Claims)
	log.FromContext(ctx).Info("Dropped ledger entries of deleted claims", "ipaddressclassusage", l.Name, "dropped", len(gone))
	return next, nil
}

// writeLedger stores next over stored with optimistic concurrency: creating
// it if stored is nil (a concurrent create is a conflict too), updating it
// at stored's resourceVersion otherwise.
func (r *ClaimReconciler) writeLedger(ctx context.Context, stored, next *v1alpha1.IPAddressClassUsage) error {
	if stored == nil {
		next.ResourceVersion = ""
		err := r.Create(ctx, next)
		if apierrors.IsAlreadyExists(err) {
			return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "ipaddressclassusages"},
				next.Name, fmt.Errorf("created concurrently"))
		}
		return err
	}
	next.ResourceVersion = stored.ResourceVersion
	return r.Update(ctx, next)
}

// releaseAdmission takes a deleted claim out of its namespace's ledger, read
// from the API server so that an admission the cache has not shown yet is
// not missed. Waiting claims of the namespace wake on the ledger's change.
func (r *ClaimReconciler) releaseAdmission(ctx context.Context, claim *v1alpha1.IPAddressClaim) error {
	class := claim.ClassName()
	if class == "" {
		return nil
	}
	l := &v1alpha1.IPAddressClassUsage{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: class}, l); err != nil {
		return client.IgnoreNotFound(err)
	}
	next := l.DeepCopy()
	next.Spec.Claims = withoutEntries(next.Spec.Claims, map[types.UID]bool{claim.UID: true})
	if len(next.Spec.Claims) == len(l.Spec.Claims) {
		return nil
	}
	next.Spec.Addresses = ledgerSum(next.Spec.Claims)
	if err := r.Update(ctx, next); err != nil {
		return client.IgnoreNotFound(err)
	}
	log.FromContext(ctx).Info("Released the claim's admission", "ipaddressclass", class, "addresses", next.Spec.Addresses)
	return nil
}
