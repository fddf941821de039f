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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// Binding: accepting pre-bindings and matching Available addresses. A binding
// is always a write of claimRef on the address, with the resourceVersion the
// decision was made on.

// errLostRace: a binding's write was refused for the resourceVersion it was
// decided on. Every candidate address was taken by another claim between the
// cache read and the write, or the address a pre-binding or spec.addressName
// names changed meanwhile (the driver's first conditions, say, written on the
// wake-up that ran the pass, and waking no claim again). The pass retries
// after lostRaceRetry.
var errLostRace = errors.New("a binding's write lost the race")

const lostRaceRetry = 100 * time.Millisecond

// considerPreBinding accepts a pre-binding that fits the claim by completing
// its UID, or says why not.
func (r *ClaimReconciler) considerPreBinding(ctx context.Context, o *claimObservation, a *v1alpha1.IPAddress) error {
	className := o.claim.ClassName()
	if o.class.resolved() {
		className = o.class.name
	}
	dup, err := manager.DuplicateOf(ctx, r.Client, a)
	if err != nil {
		return err
	}
	refusal := preBindingRefusal(o.claim, className, a, o.bound, dup)
	if refusal != "" {
		r.Recorder.Eventf(o.claim, a, corev1.EventTypeWarning, v1alpha1.EventPreBindingRefused, "Bind",
			"IPAddress %s (%s) is pre-bound to this claim but cannot be accepted: %s", a.Name, a.Spec.Address, refusal)
		return nil
	}
	if className == "" {
		return nil // nothing to compare the address's class with yet
	}
	bound, err := r.bind(ctx, o.claim, a)
	if err != nil {
		return err
	}
	if bound == nil {
		return errLostRace
	}
	o.hold(bound)
	return nil
}

// preBindingRefusal says why a claim cannot accept an address pre-bound to it,
// or "" if it can (or cannot judge yet).
func preBindingRefusal(claim *v1alpha1.IPAddressClaim, className string, a *v1alpha1.IPAddress,
	bound map[v1alpha1.IPFamily]*v1alpha1.IPAddress, duplicate string) string {
	family := a.Family()
	switch {
	case family == "":
		return fmt.Sprintf("spec.address %q is not an IP address", a.Spec.Address)
	case duplicate != "":
		return fmt.Sprintf("IPAddress %s already has address %s", duplicate, a.Spec.Address)
	case a.DeletionTimestamp != nil:
		return "the address is being deleted"
	case a.Status.Phase == v1alpha1.AddressReleased:
		return "the address is Released (it was reclaimed while the claim it names did not exist); clear its spec.claimRef to recycle it"
	case claim.Spec.AddressName != "" && claim.Spec.AddressName != a.Name:
		return fmt.Sprintf("the claim names IPAddress %s in spec.addressName", claim.Spec.AddressName)
	case !slices.Contains(claim.Spec.Family.Families(), family):
		return fmt.Sprintf("the address is %s and the claim asks for %s", family, familyText(claim.Spec.Family))
	case bound[family] != nil:
		return fmt.Sprintf("the claim already holds an %s address, %s (%s)", family, bound[family].Name, bound[family].Spec.Address)
	case className != "" && a.Spec.ClassName != className:
		return fmt.Sprintf("the address is of class %s and the claim's class is %s", a.Spec.ClassName, className)
	}
	return ""
}

// match binds an address for a missing family: the one the claim names, or
// the smallest Available one of its class. It returns the bound address, or
// why the family waits.
func (r *ClaimReconciler) match(ctx context.Context, claim *v1alpha1.IPAddressClaim, class classResolution,
	family v1alpha1.IPFamily) (*v1alpha1.IPAddress, familyWait, error) {
	if name := claim.Spec.AddressName; name != "" {
		return r.matchNamed(ctx, claim, class, family, name)
	}
	lost := false
	for range maxCandidates {
		name, ok := r.available.take(class.name, family, r.pending.isPending)
		if !ok {
			break
		}
		bound, err := r.bindAvailable(ctx, claim, class.name, family, name)
		r.available.release(name)
		if err != nil || bound != nil {
			return bound, familyWait{}, err
		}
		lost = true
	}
	if lost {
		// Every candidate went to another claim first; look again soon.
		return nil, familyWait{v1alpha1.ReasonWaitingForProvisioning,
			fmt.Sprintf("Other claims took the Available %s addresses of class %s first; looking again", family, class.name)}, errLostRace
	}
	return nil, familyWait{v1alpha1.ReasonWaitingForProvisioning,
		fmt.Sprintf("Waiting for %s to provision an %s address of class %s", class.provisioner, family, class.name)}, nil
}

// maxCandidates bounds how many Available addresses one pass tries to bind
// before it gives up on a family and looks again later.
const maxCandidates = 8

// bindAvailable re-reads a candidate and binds it if it is still an
// Available address of the class and family; nil, nil means it no longer is.
func (r *ClaimReconciler) bindAvailable(ctx context.Context, claim *v1alpha1.IPAddressClaim, class string,
	family v1alpha1.IPFamily, name string) (*v1alpha1.IPAddress, error) {
	a := &v1alpha1.IPAddress{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, a); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !isAvailable(a) || a.Spec.ClassName != class || a.Family() != family {
		return nil, nil
	}
	return r.bind(ctx, claim, a)
}

func (r *ClaimReconciler) matchNamed(ctx context.Context, claim *v1alpha1.IPAddressClaim, class classResolution,
	family v1alpha1.IPFamily, name string) (*v1alpha1.IPAddress, familyWait, error) {
	wait := func(format string, args ...any) (*v1alpha1.IPAddress, familyWait, error) {
		return nil, familyWait{v1alpha1.ReasonWaitingForAddress, fmt.Sprintf("Waiting for IPAddress %s: ", name) + fmt.Sprintf(format, args...)}, nil
	}
	a := &v1alpha1.IPAddress{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, a); err != nil {
		if apierrors.IsNotFound(err) {
			return wait("it does not exist yet")
		}
		return nil, familyWait{}, err
	}
	switch ref := a.Spec.ClaimRef; {
	case ref != nil && ref.Key() == claim.ClaimKey() && ref.UID != "" && ref.UID != claim.UID:
		return wait("it is bound to an earlier claim of this name (uid %s)", ref.UID)
	case ref != nil && ref.Key() != claim.ClaimKey():
		return wait("it is bound to claim %s", ref.Key())
	case a.Spec.ClassName != class.name:
		return wait("it is of class %s, not %s", a.Spec.ClassName, class.name)
	case a.Family() != family:
		return wait("it is %s and the claim asks for %s", a.Family(), familyText(claim.Spec.Family))
	case !isAvailable(a):
		return wait("it is %s", phaseOrNew(a))
	}
	bound, err := r.bind(ctx, claim, a)
	if err != nil || bound != nil {
		return bound, familyWait{}, err
	}
	_, changed, _ := wait("it changed as this claim bound it; looking again")
	return nil, changed, errLostRace
}

// familyText names what a claim of family f asks for.
func familyText(f v1alpha1.IPFamily) string {
	fs := f.Families()
	parts := make([]string, len(fs))
	for i, x := range fs {
		parts[i] = string(x)
	}
	return strings.Join(parts, " and ")
}

func phaseOrNew(a *v1alpha1.IPAddress) string {
	if a.Status.Phase == "" {
		return "not yet processed"
	}
	return string(a.Status.Phase)
}

// bind writes claimRef, with the claim's UID, on an address read from the
// cache. Optimistic concurrency makes a stale read fail instead of stealing:
// it returns nil, nil when the address changed meanwhile.
func (r *ClaimReconciler) bind(ctx context.Context, claim *v1alpha1.IPAddressClaim, a *v1alpha1.IPAddress) (*v1alpha1.IPAddress, error) {
	a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	if err := r.Update(ctx, a); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
			return nil, nil
		}
		return nil, err
	}
	r.pending.record(claim.UID, a)
	log.FromContext(ctx).Info("Bound address", "ipaddress", a.Name, "address", a.Spec.Address)
	r.Recorder.Eventf(claim, a, corev1.EventTypeNormal, v1alpha1.EventBound, "Bind", "Bound IPAddress %s (%s)", a.Name, a.Spec.Address)
	return a, nil
}
