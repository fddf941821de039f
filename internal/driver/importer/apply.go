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
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Outcome is what happened to one import.
type Outcome struct {
	Import Import
	// Err is why the import did not finish; nil once the claim is Bound to
	// the Service's addresses and the Service names it.
	Err error
	// Associated: the driver records the Service as carrying the addresses.
	Associated bool
}

// apply carries out the plan's imports. For each Service, in this order:
// the claim; then, in one patch, the backend's pin on the addresses the
// Service already has (unless it is pinned already) and the claim
// annotation; then the IPAddresses pre-bound to the claim. The pin is what
// the allocator already does, so it changes nothing there; the annotation
// comes before the addresses so that once the core binds an address, the
// Service holding it already names its claim (otherwise it would be a
// conflict until the annotation came). Then it waits for each claim to be
// Bound, each wait with its own timeout, saying so on p. Each step checks
// before it writes, so a rerun after a crash finishes the job.
func apply(ctx context.Context, c client.WithWatch, d importing, o *observed, plan Plan, timeout time.Duration, p *progress) []Outcome {
	outcomes := make([]Outcome, 0, len(plan.Imports))
	for _, im := range plan.Imports {
		outcome := Outcome{Import: im, Err: begin(ctx, c, d, o.class, im)}
		if outcome.Err == nil {
			p.total++
		}
		outcomes = append(outcomes, outcome)
	}
	for i := range outcomes {
		if outcomes[i].Err != nil {
			continue
		}
		im := outcomes[i].Import
		ended := p.wait("Service "+im.Service.Key(), fmt.Sprintf("IPAddressClaim %s/%s to be Bound", im.Service.Namespace, im.Claim), timeout)
		outcomes[i].Associated, outcomes[i].Err = awaitBound(ctx, c, im, timeout)
		ended(outcomes[i].Err)
	}
	return outcomes
}

// begin writes what one import needs, skipping what exists.
func begin(ctx context.Context, c client.Client, d importing, class *v1alpha1.IPAddressClass, im Import) error {
	s := im.Service
	if err := ensureClaim(ctx, c, class, im); err != nil {
		return err
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, svc); err != nil {
			return err
		}
		now := serviceOf(svc, "", d)
		switch {
		case svc.UID != s.UID:
			return fmt.Errorf("the Service %s was re-created since it was read", s.Key())
		case !slices.Equal(now.Ingress, im.Addresses):
			return fmt.Errorf("Service %s now reports %s, not %s", s.Key(), joinIPs(now.Ingress), joinIPs(im.Addresses))
		case now.Claim != "" && now.Claim != im.Claim:
			return fmt.Errorf("Service %s names IPAddressClaim %s now", s.Key(), now.Claim)
		case now.Claim == im.Claim && len(now.Pin) > 0:
			return nil
		}
		orig := svc.DeepCopy()
		metav1.SetMetaDataAnnotation(&svc.ObjectMeta, v1alpha1.AnnotationIPAddressClaim, im.Claim)
		if len(now.Pin) == 0 {
			metav1.SetMetaDataAnnotation(&svc.ObjectMeta, d.ImportPin(), joinIPs(im.Addresses))
			metav1.SetMetaDataAnnotation(&svc.ObjectMeta, v1alpha1.AnnotationImportedPin, joinIPs(im.Addresses))
		}
		return c.Patch(ctx, svc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return err
	}
	for _, ip := range im.Addresses {
		if err := ensureAddress(ctx, c, class, im, ip); err != nil {
			return err
		}
	}
	return nil
}

// ensureClaim creates the import's claim, or finds the one an earlier run
// created.
func ensureClaim(ctx context.Context, c client.Client, class *v1alpha1.IPAddressClass, im Import) error {
	s := im.Service
	claim := &v1alpha1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: im.Claim,
			Labels:      map[string]string{v1alpha1.LabelImportedFor: string(s.UID)},
			Annotations: map[string]string{v1alpha1.AnnotationImportedFrom: s.Name}},
		Spec: v1alpha1.IPAddressClaimSpec{ClassName: class.Name, Family: im.Family},
	}
	if im.Family != v1alpha1.Dual {
		// Naming the address keeps the driver from provisioning one.
		claim.Spec.AddressName = ipaddr.ObjectName(im.Addresses[0])
	}
	err := c.Create(ctx, claim)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
		return err
	}
	if importedFor(claim) != s.UID {
		return fmt.Errorf("IPAddressClaim %s/%s exists and was not created for Service %s", s.Namespace, im.Claim, s.Key())
	}
	return nil
}

// ensureAddress creates the IPAddress of ip pre-bound to the import's
// claim, or finds the one an earlier run created.
func ensureAddress(ctx context.Context, c client.Client, class *v1alpha1.IPAddressClass, im Import, ip netip.Addr) error {
	s := im.Service
	policy := class.Spec.ReclaimPolicy
	if policy == "" {
		policy = v1alpha1.ReclaimRetain
	}
	a := &v1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ipaddr.ObjectName(ip), Labels: map[string]string{v1alpha1.LabelImportedFor: string(s.UID)}},
		Spec: v1alpha1.IPAddressSpec{Address: ip.String(), ClassName: class.Name, ReclaimPolicy: policy,
			ClaimRef: &v1alpha1.ClaimReference{Namespace: s.Namespace, Name: im.Claim},
			Source:   v1alpha1.AddressSource{FromClass: &v1alpha1.FromClassSource{}}},
	}
	err := c.Create(ctx, a)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
		return err
	}
	if importedFor(a) != s.UID {
		return fmt.Errorf("IPAddress %s exists and was not created for Service %s", a.Name, s.Key())
	}
	return nil
}

// errNotBound is awaitBound's answer when time runs out.
var errNotBound = errors.New("not Bound in time")

// awaitBound waits, at most timeout, until the import's claim is Bound to
// exactly the Service's addresses, then says whether the driver has
// recorded the association yet.
func awaitBound(ctx context.Context, c client.WithWatch, im Import, timeout time.Duration) (bool, error) {
	s := im.Service
	want := make([]string, 0, len(im.Addresses))
	for _, ip := range im.Addresses {
		want = append(want, ip.String())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "not read yet"
	check := func(ctx context.Context) (bool, error) {
		claim := &v1alpha1.IPAddressClaim{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: im.Claim}, claim); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var got []string
		for _, a := range claim.Status.Addresses {
			got = append(got, a.Address)
		}
		slices.Sort(got)
		slices.Sort(want)
		last = fmt.Sprintf("phase %s, addresses %v", claim.Status.Phase, got)
		if cond := meta.FindStatusCondition(claim.Status.Conditions, v1alpha1.ConditionBound); cond != nil && cond.Status != metav1.ConditionTrue {
			last = fmt.Sprintf("phase %s, %s: %s, addresses %v", claim.Status.Phase, cond.Reason, cond.Message, got)
		}
		if claim.Status.Phase == v1alpha1.ClaimBound && !slices.Equal(got, want) {
			return false, fmt.Errorf("IPAddressClaim %s/%s is Bound to %v, not to the Service's %v; undo this import and check the class", s.Namespace, im.Claim, got, want)
		}
		return claim.Status.Phase == v1alpha1.ClaimBound, nil
	}
	err := until(ctx, c, &v1alpha1.IPAddressClaimList{}, client.ObjectKey{Namespace: s.Namespace, Name: im.Claim}, check)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("Service %s: IPAddressClaim %s/%s %w: waited %s (last seen: %s); is address-controller running?",
				s.Key(), s.Namespace, im.Claim, errNotBound, timeout, last)
		}
		return false, err
	}
	for _, ip := range im.Addresses {
		a := &v1alpha1.IPAddress{}
		if err := c.Get(ctx, client.ObjectKey{Name: ipaddr.ObjectName(ip)}, a); err != nil {
			return false, nil //nolint:nilerr // only a note: the claim is Bound
		}
		if w := a.Status.AssociatedTo; w == nil || w.Namespace != s.Namespace || w.Name != s.Name {
			return false, nil
		}
	}
	return true, nil
}
