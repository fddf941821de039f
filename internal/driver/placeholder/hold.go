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
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Allocation returns claim's allocation placeholder for family, creating it
// (marked by mark: what makes the backend's pool serve it) when there is
// none; waiting, when not empty, is what the claim waits for: the request
// was just made, or is being withdrawn because the claim moved to another
// class while it waited (the new class is asked once the old request is
// gone; its deletion wakes the claim). A placeholder of another role under
// the allocation's name is returned as it is, for the backend to judge.
func (s *Set) Allocation(ctx context.Context, claim *v1alpha1.IPAddressClaim, class string, family v1alpha1.IPFamily,
	mark func(*corev1.Service)) (ph *corev1.Service, waiting string, err error) {
	ph = &corev1.Service{}
	key := client.ObjectKey{Namespace: s.Namespace, Name: AllocationName(claim.UID, family)}
	if err := s.Client.Get(ctx, key, ph); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, "", err
		}
		ph = s.NewAllocation(claim, class, family)
		mark(ph)
		if err := s.Client.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, "", err
		}
		return ph, "Asked " + s.Allocator + " for an address", nil
	}
	if s.IsAllocation(ph) && ph.Labels[v1alpha1.LabelClass] != class {
		if ph.DeletionTimestamp == nil {
			if err := s.Delete(ctx, ph); err != nil {
				return nil, "", err
			}
		}
		return ph, fmt.Sprintf("Withdrawing the request to class %s", ph.Labels[v1alpha1.LabelClass]), nil
	}
	return ph, "", nil
}

// Record pins an allocation placeholder to the address ip the allocator
// gave it, and names the IPAddress to come, so that the hold adopts it.
func (s *Set) Record(ctx context.Context, ph *corev1.Service, ip netip.Addr) error {
	name := ipaddr.ObjectName(ip)
	if ph.Annotations[s.Pin] == ip.String() && ph.Labels[v1alpha1.LabelAddress] == AddressKey(name) {
		return nil
	}
	orig := ph.DeepCopy()
	ph.Annotations[s.Pin] = ip.String()
	ph.Annotations[v1alpha1.AnnotationAddressName] = name
	ph.Labels[v1alpha1.LabelAddress] = AddressKey(name)
	if err := s.Client.Patch(ctx, ph, client.MergeFrom(orig)); err != nil {
		return err
	}
	log.FromContext(ctx).Info(s.Allocator+" assigned an address; pinned its placeholder", "placeholder", ph.Name, "address", ip)
	return nil
}

// Hold makes sure a, whose address is ip, has exactly one placeholder, owned
// by a and marked by mark (the backend's pin and sharing, on top of
// MarkHold; created says whether the placeholder is new). The placeholder the
// allocator gives the address to is kept first, then one pinned to it (an
// allocation placeholder Reserve left is adopted this way); extra ones go. A
// placeholder this process has just deleted may linger in the cache: it
// holds nothing any more, and is not counted.
func (s *Set) Hold(ctx context.Context, a *v1alpha1.IPAddress, ip netip.Addr, class string,
	mark func(ph *corev1.Service, created bool)) (*corev1.Service, error) {
	defer s.lockHold(a.Name)()
	phs, err := s.Of(ctx, a.Name, false)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(phs, func(x, y *corev1.Service) int { return s.rank(x, ip) - s.rank(y, ip) })
	for _, extra := range phs[min(len(phs), 1):] {
		if err := s.Delete(ctx, extra); err != nil {
			return nil, err
		}
	}
	if len(phs) == 0 {
		ph := s.New(HoldName(a.Name), class, a.Family())
		MarkHold(ph, a)
		mark(ph, true)
		if err := s.Client.Create(ctx, ph); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		return ph, nil
	}
	ph := phs[0]
	// A pass that held the address just before this one patched ph; the
	// manager's client reads that write back before the cache has it, so
	// the same patch is not sent twice.
	if err := s.Client.Get(ctx, client.ObjectKeyFromObject(ph), ph); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	orig := ph.DeepCopy()
	MarkHold(ph, a)
	mark(ph, false)
	if !EqualMeta(orig, ph) {
		if err := s.Client.Patch(ctx, ph, client.MergeFrom(orig)); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
	}
	return ph, nil
}

// rank orders an address's placeholders: the one the allocator gives the
// address to first, then one pinned to it, then the rest.
func (s *Set) rank(ph *corev1.Service, ip netip.Addr) int {
	if got, ok := IngressOfFamily(ph, v1alpha1.FamilyOf(ip)); ok && got == ip {
		return 0
	}
	if ph.Annotations[s.Pin] == ip.String() {
		return 1
	}
	return 2
}

// Holds gives a backend that holds with a Set's placeholders the
// driver.Holder capability and driver.Backend's Release: embed it.
type Holds struct{ Set *Set }

// Unhold deletes every placeholder of a; the allocator frees the address
// with them. It reports true once the cache shows none left, deleting or
// not.
func (h Holds) Unhold(ctx context.Context, a *v1alpha1.IPAddress) (bool, error) {
	phs, err := h.Set.Of(ctx, a.Name, true)
	if err != nil {
		return false, err
	}
	for _, ph := range phs {
		if ph.DeletionTimestamp != nil {
			continue
		}
		if err := h.Set.Delete(ctx, ph); err != nil {
			return false, err
		}
	}
	return len(phs) == 0, nil
}

// Release deletes every placeholder of an address that goes.
func (h Holds) Release(ctx context.Context, a *v1alpha1.IPAddress) error {
	_, err := h.Unhold(ctx, a)
	return err
}

// IsHolder: a placeholder of a inside the placeholder namespace, or an
// allocation placeholder there, which the allocator offered the address and
// which records it or gives it back. The labels alone are forgeable, so the
// namespace is what counts.
func (h Holds) IsHolder(svc *corev1.Service, a *v1alpha1.IPAddress) bool {
	return h.Set.IsAllocation(svc) || h.Set.In(svc) && svc.Labels[v1alpha1.LabelAddress] == AddressKey(a.Name)
}
