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
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Field indexes of placeholder Services (in the placeholder namespace only).
const (
	indexPlaceholderByAddress  = "metallb.placeholderByAddress"
	indexPlaceholderByClaimUID = "metallb.placeholderByClaimUID"
	indexPlaceholderByYielded  = "metallb.placeholderByYielded"
	indexPoolByBucket          = "metallb.poolByBucket"
)

// Reserve asks MetalLB for an address of family for claim, through an
// allocation placeholder that selects the class's pool, and once MetalLB has
// assigned one, pins the placeholder to it and labels it with the IPAddress
// name to come.
func (b *Backend) Reserve(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass,
	family v1alpha1.IPFamily) (driver.Reservation, error) {
	ph := &corev1.Service{}
	key := client.ObjectKey{Namespace: b.opts.PlaceholderNamespace, Name: allocationName(claim.UID, family)}
	if err := b.Get(ctx, key, ph); err != nil {
		if !apierrors.IsNotFound(err) {
			return driver.Reservation{}, err
		}
		ph = b.placeholder(key.Name, class.Name, family)
		ph.Labels[v1alpha1.LabelPlaceholder] = v1alpha1.PlaceholderAllocation
		ph.Labels[v1alpha1.LabelClaimUID] = string(claim.UID)
		ph.Annotations[annotationClaim] = claim.ClaimKey()
		ph.Annotations[annotationAddressPool] = params.PoolName(class.Name)
		if err := b.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return driver.Reservation{}, err
		}
		return driver.Reservation{Waiting: "Asked MetalLB for an address"}, nil
	}
	if ph.Labels[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone {
		return b.awaitTombstone(ctx, ph, claim)
	}
	if b.isAllocation(ph) && ph.Labels[v1alpha1.LabelClass] != class.Name {
		// The claim moved to another class while it waited: the old request
		// goes, and the new class is asked once it is gone (its deletion
		// wakes the claim).
		if ph.DeletionTimestamp == nil {
			if err := b.deletePlaceholder(ctx, ph); err != nil {
				return driver.Reservation{}, err
			}
		}
		return driver.Reservation{Waiting: fmt.Sprintf("Withdrawing the request to class %s", ph.Labels[v1alpha1.LabelClass])}, nil
	}
	if yielded := ph.Annotations[annotationYieldedTo]; yielded != "" && b.isAllocation(ph) {
		return b.awaitRightfulHolder(ctx, ph, yielded)
	}
	ip, ok := ingressOfFamily(ph, family)
	if !ok {
		return driver.Reservation{Waiting: fmt.Sprintf("Waiting for MetalLB to assign an %s address from pool %s (exhausted, or MetalLB not running)",
			family, params.PoolName(class.Name))}, nil
	}
	if b.isAllocation(ph) {
		owner, err := b.recordedElsewhere(ctx, ip, claim)
		if err != nil {
			return driver.Reservation{}, err
		}
		if owner != nil {
			return b.yield(ctx, ph, claim, owner, ip)
		}
	}
	name := ipaddr.ObjectName(ip)
	if ph.Annotations[annotationLoadBalancerIPs] != ip.String() || ph.Labels[v1alpha1.LabelAddress] != addressKey(name) {
		orig := ph.DeepCopy()
		ph.Annotations[annotationLoadBalancerIPs] = ip.String()
		ph.Annotations[annotationAddressName] = name
		ph.Labels[v1alpha1.LabelAddress] = addressKey(name)
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
	key, err := b.holdKey(ctx, a)
	if err != nil {
		return driver.HoldState{}, err
	}
	phs, err := b.placeholdersOf(ctx, a.Name, false)
	if err != nil {
		return driver.HoldState{}, err
	}
	// A placeholder this process has just deleted may linger in the cache;
	// it holds nothing any more.
	phs = slices.DeleteFunc(phs, func(ph *corev1.Service) bool { return b.deleted.recent(ph.UID, time.Now()) })
	slices.SortFunc(phs, func(x, y *corev1.Service) int { return rank(x, ip) - rank(y, ip) })
	for _, extra := range phs[min(len(phs), 1):] {
		if err := b.deletePlaceholder(ctx, extra); err != nil {
			return driver.HoldState{}, err
		}
	}
	var ph *corev1.Service
	if len(phs) == 0 {
		ph = b.placeholder(holdName(a.Name), class.Name, a.Family())
		b.markHold(ph, a, ip, key)
		ph.Annotations[annotationRetry] = retry
		if err := b.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return driver.HoldState{}, err
		}
		b.metrics.holdsCreated.Inc()
	} else {
		ph = phs[0]
		orig := ph.DeepCopy()
		b.markHold(ph, a, ip, key)
		if !equalMeta(orig, ph) {
			if err := b.Patch(ctx, ph, client.MergeFrom(orig)); err != nil {
				return driver.HoldState{}, client.IgnoreNotFound(err)
			}
		}
	}
	return b.holdState(ctx, ph, class, ip), nil
}

// holdState says whether MetalLB gives the placeholder its address.
func (b *Backend) holdState(ctx context.Context, ph *corev1.Service, class *v1alpha1.IPAddressClass, ip netip.Addr) driver.HoldState {
	if got, ok := ingressOfFamily(ph, v1alpha1.FamilyOf(ip)); ok && got == ip {
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

// markHold pins a placeholder to the address it holds and hands its
// lifecycle to the IPAddress.
func (b *Backend) markHold(ph *corev1.Service, a *v1alpha1.IPAddress, ip netip.Addr, key string) {
	ph.Labels[v1alpha1.LabelPlaceholder] = v1alpha1.PlaceholderHold
	ph.Labels[v1alpha1.LabelAddress] = addressKey(a.Name)
	ph.Annotations[annotationAddressName] = a.Name
	ph.Annotations[annotationLoadBalancerIPs] = ip.String()
	ph.Annotations[annotationAllowSharedIP] = key
	delete(ph.Annotations, annotationAddressPool)
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "IPAddress", Name: a.Name, UID: a.UID}
	if !slices.ContainsFunc(ph.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == a.UID }) {
		ph.OwnerReferences = append(ph.OwnerReferences, owner)
	}
}

// Unhold deletes every placeholder of an address; MetalLB frees the address
// with them. It reports true once the cache shows none left, deleting or not.
func (b *Backend) Unhold(ctx context.Context, a *v1alpha1.IPAddress) (bool, error) {
	phs, err := b.placeholdersOf(ctx, a.Name, true)
	if err != nil {
		return false, err
	}
	for _, ph := range phs {
		if ph.DeletionTimestamp != nil {
			continue
		}
		if err := b.deletePlaceholder(ctx, ph); err != nil {
			return false, err
		}
	}
	return len(phs) == 0, nil
}

// IsHolder: a placeholder of this address inside the placeholder namespace,
// or an allocation placeholder there, which MetalLB offered the address and
// which records it or gives it back (see yield). The label alone is
// forgeable, so the namespace is what counts.
func (b *Backend) IsHolder(svc *corev1.Service, a *v1alpha1.IPAddress) bool {
	if svc.Namespace != b.opts.PlaceholderNamespace {
		return false
	}
	return b.isAllocation(svc) ||
		svc.Labels[v1alpha1.LabelPlaceholder] != "" && svc.Labels[v1alpha1.LabelAddress] == addressKey(a.Name)
}

// placeholdersOf lists the placeholders of an address, those being deleted
// only when asked.
func (b *Backend) placeholdersOf(ctx context.Context, addressName string, deleting bool) ([]*corev1.Service, error) {
	list := &corev1.ServiceList{}
	if err := b.List(ctx, list, client.InNamespace(b.opts.PlaceholderNamespace),
		client.MatchingFields{indexPlaceholderByAddress: addressKey(addressName)}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Service, 0, len(list.Items))
	for i := range list.Items {
		if deleting || list.Items[i].DeletionTimestamp == nil {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// deletePlaceholder deletes ph once: a second pass that still finds it in the
// cache, right after this process deleted it, sends nothing.
func (b *Backend) deletePlaceholder(ctx context.Context, ph *corev1.Service) error {
	if !b.deleted.begin(ph.UID, time.Now()) {
		return nil
	}
	if err := b.Delete(ctx, ph, client.Preconditions{UID: &ph.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		b.deleted.forget(ph.UID)
		return err
	}
	return nil
}

// deletionMemory is how long a deletion is remembered: long enough for the
// cache to show it, short enough that the memory stays small. Deleting again
// after that is harmless, only a wasted request.
const deletionMemory = 30 * time.Second

// deletions remembers the placeholders this process deleted lately. Two
// passes acting on the same cache (the Service pass handing an address over
// and the address pass seeing the association it recorded) would otherwise
// both delete the hold.
type deletions struct {
	mu     sync.Mutex
	at     map[types.UID]time.Time
	pruned time.Time
}

// begin records that uid is being deleted now; false when it already was,
// lately.
func (d *deletions) begin(uid types.UID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.pruned) > deletionMemory {
		maps.DeleteFunc(d.at, func(_ types.UID, at time.Time) bool { return now.Sub(at) > deletionMemory })
		d.pruned = now
	}
	if at, ok := d.at[uid]; ok && now.Sub(at) <= deletionMemory {
		return false
	}
	if d.at == nil {
		d.at = map[types.UID]time.Time{}
	}
	d.at[uid] = now
	return true
}

// recent reports whether this process deleted uid lately.
func (d *deletions) recent(uid types.UID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[uid]
	return ok && now.Sub(at) <= deletionMemory
}

// forget drops uid after a deletion that failed, so that the next pass tries
// again.
func (d *deletions) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, uid)
}

// placeholder is a selectorless, single-stack LoadBalancer Service with no
// node ports: MetalLB assigns it an address but, with no endpoints, nothing
// announces it.
func (b *Backend) placeholder(name, class string, family v1alpha1.IPFamily) *corev1.Service {
	ipFamily := corev1.IPv4Protocol
	if family == v1alpha1.IPv6 {
		ipFamily = corev1.IPv6Protocol
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: b.opts.PlaceholderNamespace,
			Name:      name,
			Labels: map[string]string{
				params.LabelManagedBy: params.ManagedByValue,
				v1alpha1.LabelClass:   class,
				v1alpha1.LabelFamily:  string(family),
			},
			Annotations: map[string]string{},
		},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			IPFamilyPolicy:                ptr.To(corev1.IPFamilyPolicySingleStack),
			IPFamilies:                    []corev1.IPFamily{ipFamily},
			Ports:                         []corev1.ServicePort{{Name: "placeholder", Port: placeholderPort, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// rank orders an address's placeholders: the one MetalLB gives the address
// to first, then one pinned to it, then the rest.
func rank(ph *corev1.Service, ip netip.Addr) int {
	if got, ok := ingressOfFamily(ph, v1alpha1.FamilyOf(ip)); ok && got == ip {
		return 0
	}
	if ph.Annotations[annotationLoadBalancerIPs] == ip.String() {
		return 1
	}
	return 2
}

func ingressOfFamily(svc *corev1.Service, family v1alpha1.IPFamily) (netip.Addr, bool) {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil && v1alpha1.FamilyOf(ip) == family {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

func equalMeta(a, b *corev1.Service) bool {
	return fmt.Sprint(a.Labels) == fmt.Sprint(b.Labels) && fmt.Sprint(a.Annotations) == fmt.Sprint(b.Annotations) &&
		fmt.Sprint(a.OwnerReferences) == fmt.Sprint(b.OwnerReferences)
}
