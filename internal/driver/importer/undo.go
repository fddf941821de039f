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

package importer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Undo is one import to take back, or the reason it stays.
type Undo struct {
	Namespace, Claim, Service string
	Addresses                 []string // IPAddress names
	// Reason is why the import stays; empty when it can be undone.
	Reason string

	claim     *v1alpha1.IPAddressClaim
	addresses []*v1alpha1.IPAddress
}

// planUndo finds the claims an import created in scope and, for each, checks
// that nothing has used what it created since: the Service is the one
// imported, still names the claim and reports its addresses, and the claim
// holds no address and no carrier the import did not give it.
func planUndo(ctx context.Context, c client.Reader, sc Scope) ([]Undo, error) {
	claims := &v1alpha1.IPAddressClaimList{}
	if err := c.List(ctx, claims, client.HasLabels{v1alpha1.LabelImportedFor}); err != nil {
		return nil, fmt.Errorf("listing imported IPAddressClaims: %w", err)
	}
	addresses := &v1alpha1.IPAddressList{}
	if err := c.List(ctx, addresses); err != nil {
		return nil, fmt.Errorf("listing IPAddresses: %w", err)
	}
	var out []Undo
	for i := range claims.Items {
		claim := &claims.Items[i]
		if claim.ClassName() != sc.Class || len(sc.Namespaces) > 0 && !slices.Contains(sc.Namespaces, claim.Namespace) {
			continue
		}
		u := Undo{Namespace: claim.Namespace, Claim: claim.Name, Service: claim.Annotations[v1alpha1.AnnotationImportedFrom], claim: claim}
		svc := &corev1.Service{}
		err := c.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: u.Service}, svc)
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if err == nil && !sc.includes(svc) {
			continue
		}
		var others []string
		for j := range addresses.Items {
			a := &addresses.Items[j]
			switch {
			case importedFor(a) == importedFor(claim):
				u.addresses = append(u.addresses, a)
				u.Addresses = append(u.Addresses, a.Name)
			case a.Spec.ClaimRef != nil && a.Spec.ClaimRef.Key() == claim.ClaimKey():
				others = append(others, a.Name)
			}
		}
		u.Reason = undoRefusal(claim, svc, err == nil, u.addresses, others)
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b Undo) int { return strings.Compare(a.Namespace+"/"+a.Claim, b.Namespace+"/"+b.Claim) })
	return out, nil
}

// undoRefusal says what has used an import since it was made, or "".
func undoRefusal(claim *v1alpha1.IPAddressClaim, svc *corev1.Service, exists bool, ours []*v1alpha1.IPAddress, others []string) string {
	if !exists || svc.UID != importedFor(claim) || svc.DeletionTimestamp != nil {
		return fmt.Sprintf("Service %s is gone: the claim holds its addresses now", claim.Annotations[v1alpha1.AnnotationImportedFrom])
	}
	if name := svc.Annotations[v1alpha1.AnnotationIPAddressClaim]; name != claim.Name {
		return fmt.Sprintf("Service %s names %q now", svc.Name, name)
	}
	if len(others) > 0 {
		return fmt.Sprintf("the claim holds IPAddresses the import did not create: %v", others)
	}
	var ips []string
	for _, a := range ours {
		ips = append(ips, a.Spec.Address)
		if w := a.Status.AssociatedTo; w != nil && (w.Namespace != svc.Namespace || w.Name != svc.Name || w.UID != svc.UID) {
			return fmt.Sprintf("IPAddress %s is carried by %s %s/%s", a.Name, w.Kind, w.Namespace, w.Name)
		}
	}
	have := IngressOf(svc)
	var got []string
	for _, ip := range have {
		got = append(got, ip.String())
	}
	slices.Sort(ips)
	slices.Sort(got)
	if !slices.Equal(ips, got) {
		return fmt.Sprintf("Service %s reports %v, not the imported %v", svc.Name, got, ips)
	}
	return ""
}

// goneObject is one object an undo waits to go, of list's kind, and its
// description.
type goneObject struct {
	obj  client.Object
	list client.ObjectList
	what string
}

// awaitGone returns once obj (one of list's kind) no longer exists, or
// after timeout with the context's error.
func awaitGone(ctx context.Context, c client.WithWatch, obj client.Object, list client.ObjectList, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	key := client.ObjectKeyFromObject(obj)
	return until(ctx, c, list, key, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, obj.DeepCopyObject().(client.Object))
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// undo takes one import back: the IPAddresses first (they stay, deleting,
// while the claim protects them), then the claim, and once both are gone
// the Service's annotation and the pin the import wrote (annotation pin).
// The Service keeps that pin until the ledger no longer records its
// addresses, so at no moment is it a conflict; the allocator keeps the
// address it has when a pin goes. Each wait for an object to go has its own
// timeout, and says so on p.
func undo(ctx context.Context, c client.WithWatch, u Undo, pin string, timeout time.Duration, p *progress) error {
	for _, a := range u.addresses {
		if err := c.Delete(ctx, a, client.Preconditions{UID: &a.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	if err := c.Delete(ctx, u.claim, client.Preconditions{UID: &u.claim.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return err
	}
	gone := []goneObject{{u.claim, &v1alpha1.IPAddressClaimList{}, fmt.Sprintf("IPAddressClaim %s/%s", u.Namespace, u.Claim)}}
	names := []string{gone[0].what}
	for _, a := range u.addresses {
		gone = append(gone, goneObject{a, &v1alpha1.IPAddressList{}, "IPAddress " + a.Name})
		names = append(names, "IPAddress "+a.Name)
	}
	ended := p.wait(fmt.Sprintf("Service %s/%s", u.Namespace, u.Service), strings.Join(names, " and ")+" to go", timeout)
	for _, g := range gone {
		if err := awaitGone(ctx, c, g.obj, g.list, timeout); err != nil {
			err = fmt.Errorf("undoing the import of Service %s/%s: %s did not go within %s (is address-controller running?): %w",
				u.Namespace, u.Service, g.what, timeout, err)
			ended(err)
			return err
		}
	}
	ended(nil)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: u.Service}, svc); err != nil {
			return client.IgnoreNotFound(err)
		}
		orig := svc.DeepCopy()
		if svc.Annotations[v1alpha1.AnnotationIPAddressClaim] == u.Claim {
			delete(svc.Annotations, v1alpha1.AnnotationIPAddressClaim)
		}
		if imported, ok := svc.Annotations[v1alpha1.AnnotationImportedPin]; ok {
			if svc.Annotations[pin] == imported {
				delete(svc.Annotations, pin)
			}
			delete(svc.Annotations, v1alpha1.AnnotationImportedPin)
		}
		return c.Patch(ctx, svc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
}
