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

// admissionResult is what a pass decided about a claim's admission.
type admissionResult struct {
	// admitted is the class the claim is admitted to after the pass, for
	// status.admittedClassName; "" while it is not.
	admitted string
	// refusal says why the claim waits; nil once it may go on.
	refusal *familyWait
	// stamp is what the provisioner stamp becomes.
	stamp stamp
}

// stamp is what a pass does with the claim's provisioner stamp: keep it as
// it is, or set it to provisioner ("" takes it off).
type stamp struct {
	keep        bool
	provisioner string
}

// admission decides whether the claim may draw from the class it resolved
// to. Only what the core wrote counts: status.admittedClassName, or an
// address of the class bound to the claim. A claim re-targeted to another
// class gives up its place in the old class's ledger and is admitted again;
// the provisioner stamp, which a tenant can write, is never proof.
func (r *ClaimReconciler) admission(ctx context.Context, o *claimObservation) (admissionResult, error) {
	claim := o.claim
	prior := claim.Status.AdmittedClassName
	res := admissionResult{admitted: prior, stamp: stamp{keep: true}}
	wasBound := claim.Status.Phase == v1alpha1.ClaimBound || claim.Status.Phase == v1alpha1.ClaimLost
	switch {
	case !o.class.resolved():
		return res, r.ensureCounted(ctx, claim, countedClass(o))
	case prior == o.class.name || heldFrom(o, o.class.name):
		res.admitted = o.class.name
	case wasBound:
		// Bound before admission was recorded, and holding nothing of the
		// class it names now: it gets nothing new either way.
		return res, r.ensureCounted(ctx, claim, countedClass(o))
	default:
		if prior != "" {
			if err := r.releaseAdmission(ctx, claim, prior); err != nil {
				return res, err
			}
			log.FromContext(ctx).Info("Re-admitting the re-targeted claim", "from", prior, "to", o.class.name)
			res.admitted = ""
		}
		if restricted(o.class.object) {
			// The finalizer goes on before the claim can enter a ledger.
			if err := r.ensureMetadata(ctx, claim, stamp{keep: true}); err != nil {
				return res, err
			}
			refusal, err := r.admit(ctx, claim, o.class.object)
			if err != nil {
				return res, err
			}
			res.refusal = refusal
		}
		if res.refusal == nil {
			res.admitted = o.class.name
		}
	}
	if res.admitted != "" {
		res.stamp = stamp{provisioner: o.class.provisioner}
	} else {
		res.stamp = stamp{}
	}
	if forgedStamp(claim, o.class, res.admitted) {
		done := "removed"
		if res.admitted != "" {
			done = "replaced"
		}
		r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, v1alpha1.EventForgedStamp, "Admit",
			"The claim carries %s=%s, which the core did not write; it is not proof of admission, and the core %s it",
			v1alpha1.AnnotationProvisioner, claim.Annotations[v1alpha1.AnnotationProvisioner], done)
	}
	if res.admitted == prior && res.refusal == nil {
		return res, r.ensureCounted(ctx, claim, res.admitted)
	}
	return res, nil
}

// heldFrom reports whether the claim holds, or held until it went Lost, an
// address of class: it was admitted to that class then, and keeps what it
// has whatever the class's policy says now.
func heldFrom(o *claimObservation, class string) bool {
	for _, held := range []map[v1alpha1.IPFamily]*v1alpha1.IPAddress{o.bound, o.lost} {
		for _, a := range held {
			if a.Spec.ClassName == class {
				return true
			}
		}
	}
	return false
}

// forgedStamp reports whether the claim carries a provisioner stamp that
// the core did not write: its status records no admission that explains
// it. A stamp left by the class the claim was re-targeted from is the
// core's own.
func forgedStamp(claim *v1alpha1.IPAddressClaim, class classResolution, admitted string) bool {
	got := claim.Annotations[v1alpha1.AnnotationProvisioner]
	switch prior := claim.Status.AdmittedClassName; {
	case got == "":
		return false
	case prior == class.name:
		return got != class.provisioner
	case prior != "":
		return false
	default:
		// Nothing recorded: the core stamps in the pass that admits, just
		// before recording it, so only a stamp on a claim admitted now,
		// naming the class's own provisioner, can be the core's.
		return admitted == "" || got != class.provisioner
	}
}

// countedClass is the class whose ledger counts the claim: the one it was
// admitted to, or, for a claim bound before admission was recorded, the
// one it resolved to.
func countedClass(o *claimObservation) string {
	if c := o.claim.Status.AdmittedClassName; c != "" {
		return c
	}
	if len(o.bound) > 0 || len(o.lost) > 0 {
		return o.claim.Status.ClassName
	}
	return ""
}

// ensureCounted puts an admitted claim back into its namespace's ledger for
// a class with a limit, if the ledger lost it (deleted by hand): every
// claim holding the class counts against the limit. It reads the API server
// before writing, since the cache may not show an admission just written.
func (r *ClaimReconciler) ensureCounted(ctx context.Context, claim *v1alpha1.IPAddressClaim, className string) error {
	if className == "" {
		return nil
	}
	class := &v1alpha1.IPAddressClass{}
	if err := r.Get(ctx, client.ObjectKey{Name: className}, class); err != nil {
		return client.IgnoreNotFound(err)
	}
	if class.Spec.AddressesPerNamespace == nil || class.DeletionTimestamp != nil {
		return nil
	}
	cached, err := r.readLedger(ctx, claim.Namespace, className)
	if err != nil || hasEntry(cached, claim.UID) {
		return err
	}
	stored := &v1alpha1.IPAddressClassUsage{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: className}, stored); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		stored = nil
	}
	if hasEntry(stored, claim.UID) {
		return nil
	}
	next, err := r.syncLedger(ctx, stored, claim.Namespace, class)
	if err != nil {
		return err
	}
	if !hasEntry(next, claim.UID) {
		next.Spec.Claims = withEntry(next.Spec.Claims, v1alpha1.AdmittedClaim{Name: claim.Name, UID: claim.UID, Addresses: claimAddresses(claim)})
		next.Spec.Addresses = ledgerSum(next.Spec.Claims)
	}
	if err := r.writeLedger(ctx, stored, next); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Counted the claim again in its namespace's ledger", "ipaddressclass", className, "addresses", next.Spec.Addresses)
	return nil
}

func hasEntry(l *v1alpha1.IPAddressClassUsage, uid types.UID) bool {
	return l != nil && slices.ContainsFunc(l.Spec.Claims, func(e v1alpha1.AdmittedClaim) bool { return e.UID == uid })
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
// to class: its status records the admission, or it holds or held an
// address. The provisioner stamp, which a tenant can write, does not count.
func holdsAdmission(c *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass) bool {
	return c.Status.AdmittedClassName == class.Name || len(c.Status.Addresses) > 0 ||
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

// releaseAdmission takes a claim out of its namespace's ledger for class
// (the claim was deleted, or re-targeted away from class), read from the API
// server so that an admission the cache has not shown yet is not missed.
// Waiting claims of the namespace wake on the ledger's change.
func (r *ClaimReconciler) releaseAdmission(ctx context.Context, claim *v1alpha1.IPAddressClaim, class string) error {
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

// admittedClass is the class whose ledger holds a claim: the one its status
// records, or, for a claim admitted before the record existed, the one it
// names.
func admittedClass(claim *v1alpha1.IPAddressClaim) string {
	if c := claim.Status.AdmittedClassName; c != "" {
		return c
	}
	return claim.ClassName()
}
