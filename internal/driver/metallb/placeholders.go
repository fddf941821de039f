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

package metallb

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Field indexes of MetalLB's own (the placeholders' are the framework's).
const (
	indexPlaceholderByYielded = "metallb.placeholderByYielded"
	indexPoolByBucket         = "metallb.poolByBucket"
)

// Reserve asks MetalLB for an address of family for claim, through an
// allocation placeholder that selects the class's pool, and once MetalLB has
// assigned one, pins the placeholder to it and labels it with the IPAddress
// name to come.
func (b *Backend) Reserve(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass,
	family v1alpha1.IPFamily) (driver.Reservation, error) {
	ph := &corev1.Service{}
	key := client.ObjectKey{Namespace: b.opts.PlaceholderNamespace, Name: placeholder.AllocationName(claim.UID, family)}
	if err := b.Get(ctx, key, ph); err != nil {
		if !apierrors.IsNotFound(err) {
			return driver.Reservation{}, err
		}
		ph = b.set.NewAllocation(claim, class.Name, family)
		ph.Annotations[annotationAddressPool] = params.PoolName(class.Name)
		if err := b.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return driver.Reservation{}, err
		}
		return driver.Reservation{Waiting: "Asked MetalLB for an address"}, nil
	}
	if ph.Labels[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone {
		return b.awaitTombstone(ctx, ph, claim)
	}
	if b.set.IsAllocation(ph) && ph.Labels[v1alpha1.LabelClass] != class.Name {
		// The claim moved to another class while it waited: the old request
		// goes, and the new class is asked once it is gone (its deletion
		// wakes the claim).
		if ph.DeletionTimestamp == nil {
			if err := b.set.Delete(ctx, ph); err != nil {
				return driver.Reservation{}, err
			}
		}
		return driver.Reservation{Waiting: fmt.Sprintf("Withdrawing the request to class %s", ph.Labels[v1alpha1.LabelClass])}, nil
	}
	if yielded := ph.Annotations[annotationYieldedTo]; yielded != "" && b.set.IsAllocation(ph) {
		return b.awaitRightfulHolder(ctx, ph, yielded)
	}
	ip, ok := placeholder.IngressOfFamily(ph, family)
	if !ok {
		return driver.Reservation{Waiting: fmt.Sprintf("Waiting for MetalLB to assign an %s address from pool %s (exhausted, or MetalLB not running)",
			family, params.PoolName(class.Name))}, nil
	}
	if b.set.IsAllocation(ph) {
		owner, err := b.recordedElsewhere(ctx, ip, claim)
		if err != nil {
			return driver.Reservation{}, err
		}
		if owner != nil {
			return b.yield(ctx, ph, claim, owner, ip)
		}
	}
	name := ipaddr.ObjectName(ip)
	if ph.Annotations[annotationLoadBalancerIPs] != ip.String() || ph.Labels[v1alpha1.LabelAddress] != placeholder.AddressKey(name) {
		orig := ph.DeepCopy()
		ph.Annotations[annotationLoadBalancerIPs] = ip.String()
		ph.Annotations[placeholder.AnnotationAddressName] = name
		ph.Labels[v1alpha1.LabelAddress] = placeholder.AddressKey(name)
		if err := b.Patch(ctx, ph, client.MergeFrom(orig)); err != nil {
			return driver.Reservation{}, err
		}
		log.FromContext(ctx).Info("MetalLB assigned an address; pinned its placeholder", "placeholder", ph.Name, "address", ip)
	}
	return driver.Reservation{Address: ip}, nil
}

// Hold keeps a reserved in MetalLB's books with a placeholder Service pinned
// to it, owned by the address, carrying the address's sharing key so that a
// workload can join it. A placeholder Reserve left for it is adopted; extra
// ones go.
func (b *Backend) Hold(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass, retry string) (driver.HoldState, error) {
	ip, err := a.IP()
	if err != nil {
		return driver.HoldState{Reason: "InvalidAddress", Message: err.Error()}, nil
	}
	key, err := b.secret.HoldKey(ctx, a)
	if err != nil {
		return driver.HoldState{}, err
	}
	// A placeholder this process has just deleted may linger in the cache;
	// it holds nothing any more, and Of leaves it out.
	phs, err := b.set.Of(ctx, a.Name, false)
	if err != nil {
		return driver.HoldState{}, err
	}
	slices.SortFunc(phs, func(x, y *corev1.Service) int {
		return placeholder.Rank(x, ip, annotationLoadBalancerIPs) - placeholder.Rank(y, ip, annotationLoadBalancerIPs)
	})
	for _, extra := range phs[min(len(phs), 1):] {
		if err := b.set.Delete(ctx, extra); err != nil {
			return driver.HoldState{}, err
		}
	}
	var ph *corev1.Service
	if len(phs) == 0 {
		ph = b.set.New(placeholder.HoldName(a.Name), class.Name, a.Family())
		markHold(ph, a, ip, key)
		ph.Annotations[annotationRetry] = retry
		if err := b.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return driver.HoldState{}, err
		}
		b.metrics.holdsCreated.Inc()
	} else {
		ph = phs[0]
		orig := ph.DeepCopy()
		markHold(ph, a, ip, key)
		if !placeholder.EqualMeta(orig, ph) {
			if err := b.Patch(ctx, ph, client.MergeFrom(orig)); err != nil {
				return driver.HoldState{}, client.IgnoreNotFound(err)
			}
		}
	}
	return b.holdState(ctx, ph, class, ip), nil
}

// holdState says whether MetalLB gives the placeholder its address.
func (b *Backend) holdState(ctx context.Context, ph *corev1.Service, class *v1alpha1.IPAddressClass, ip netip.Addr) driver.HoldState {
	if got, ok := placeholder.IngressOfFamily(ph, v1alpha1.FamilyOf(ip)); ok && got == ip {
		return driver.HoldState{Held: true, Reason: driver.ReasonHeld,
			Message: fmt.Sprintf("MetalLB assigns %s to placeholder %s/%s", ip, ph.Namespace, ph.Name)}
	}
	covered, known := b.poolCovers(ctx, class.Name, ip)
	if known && !covered {
		return driver.HoldState{Lost: true, Reason: driver.ReasonBackendLost,
			Message: fmt.Sprintf("%s is outside every range of IPAddressPool %s/%s; MetalLB cannot hold it", ip, b.opts.MetalLBNamespace, params.PoolName(class.Name))}
	}
	return driver.HoldState{Reason: driver.ReasonHoldPending,
		Message: fmt.Sprintf("Placeholder %s/%s waits for MetalLB to assign %s", ph.Namespace, ph.Name, ip)}
}

// markHold makes ph a's hold, pinned to the address and carrying its
// sharing key.
func markHold(ph *corev1.Service, a *v1alpha1.IPAddress, ip netip.Addr, key string) {
	placeholder.MarkHold(ph, a)
	ph.Annotations[annotationLoadBalancerIPs] = ip.String()
	ph.Annotations[annotationAllowSharedIP] = key
	delete(ph.Annotations, annotationAddressPool)
}

// Unhold deletes every placeholder of an address; MetalLB frees the address
// with them. It reports true once the cache shows none left, deleting or not.
func (b *Backend) Unhold(ctx context.Context, a *v1alpha1.IPAddress) (bool, error) {
	return b.set.Unhold(ctx, a)
}

// Release deletes every placeholder of an address that goes.
func (b *Backend) Release(ctx context.Context, a *v1alpha1.IPAddress) error {
	_, err := b.set.Unhold(ctx, a)
	return err
}

// IsHolder: a placeholder of this address inside the placeholder namespace,
// or an allocation placeholder there, which MetalLB offered the address and
// which records it or gives it back (see yield). The label alone is
// forgeable, so the namespace is what counts.
func (b *Backend) IsHolder(svc *corev1.Service, a *v1alpha1.IPAddress) bool {
	return b.set.IsHolder(svc, a)
}
