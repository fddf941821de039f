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
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// ForImport is the backend `metallb-iad import` runs with: it reads and
// writes through the client the import gives it, and renders into the
// MetalLB namespace of opts.
func ForImport(opts Options) *Backend { return &Backend{opts: opts} }

// ImportRanges reads class's ranges; with avoidBuggyIPs MetalLB never gives
// an IPv4 address ending in .0 or .255.
func (b *Backend) ImportRanges(class *v1alpha1.IPAddressClass) ([]ipaddr.Range, func(netip.Addr) string, error) {
	p, err := params.Decode(class.Spec.Parameters)
	if err != nil {
		return nil, nil, err
	}
	return p.Ranges, refusal(p.AvoidBuggyIPs), nil
}

func refusal(avoidBuggyIPs bool) func(netip.Addr) string {
	return func(ip netip.Addr) string {
		if avoidBuggyIPs && ip.Is4() {
			if last := ip.As4()[3]; last == 0 || last == 255 {
				return "ends in .0 or .255, which the class avoids (avoidBuggyIPs)"
			}
		}
		return ""
	}
}

// ImportPin is MetalLB's pin annotation.
func (b *Backend) ImportPin() string { return annotationLoadBalancerIPs }

// poolShrink is one pool of someone else's that overlaps the class: it
// keeps remaining, or is deleted when nothing remains.
type poolShrink struct {
	pool              *unstructured.Unstructured
	before, remaining []ipaddr.Range
}

// handover hands the class's ranges over from the admin's IPAddressPools
// to the class's own.
type handover struct {
	create    bool
	pool, adv *unstructured.Unstructured
	ours      []ipaddr.Range
	refuses   func(netip.Addr) string
	moving    []ipaddr.Range
	shrinks   []poolShrink
}

// PlanHandover finds the IPAddressPools in MetalLB's namespace that overlap
// the pool the driver renders for class.
func (b *Backend) PlanHandover(ctx context.Context, c client.Reader, class *v1alpha1.IPAddressClass, keep []netip.Addr) (driver.Handover, error) {
	p, err := params.Decode(class.Spec.Parameters)
	if err != nil {
		return nil, err
	}
	h := &handover{refuses: refusal(p.AvoidBuggyIPs)}
	h.pool, h.adv = rendering(class, b.opts.MetalLBNamespace, p, keep)
	h.ours, _ = params.PoolRanges(h.pool)
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(params.IPAddressPoolGVK)
	err = c.Get(ctx, client.ObjectKeyFromObject(h.pool), existing)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	h.create = apierrors.IsNotFound(err)

	pools := &unstructured.UnstructuredList{}
	pools.SetGroupVersionKind(params.IPAddressPoolGVK.GroupVersion().WithKind("IPAddressPoolList"))
	if err := c.List(ctx, pools, client.InNamespace(b.opts.MetalLBNamespace)); err != nil {
		return nil, fmt.Errorf("listing IPAddressPools: %w", err)
	}
	for i := range pools.Items {
		pool := &pools.Items[i]
		if pool.GetName() == h.pool.GetName() {
			continue
		}
		theirs, _ := params.PoolRanges(pool)
		if len(params.Overlaps(h.ours, theirs)) == 0 {
			continue
		}
		left := ipaddr.Subtract(theirs, h.ours)
		h.moving = append(h.moving, ipaddr.Subtract(theirs, left)...)
		h.shrinks = append(h.shrinks, poolShrink{pool: pool, before: theirs, remaining: left})
	}
	return h, nil
}

// Moving are the ranges that leave the admin's pools.
func (h *handover) Moving() []ipaddr.Range { return h.moving }

// Takes: the class's pool gives svc ip: it lies in the pool, MetalLB would
// not avoid it, and the pool selects svc.
func (h *handover) Takes(svc *corev1.Service, ip netip.Addr) bool {
	return slices.ContainsFunc(h.ours, func(r ipaddr.Range) bool { return r.Contains(ip) }) &&
		h.refuses(ip) == "" && svc.Labels[v1alpha1.LabelWithdrawn] == ""
}

// Tie: svc names a pool other than the class's. MetalLB gives a Service
// that names a pool an address of that pool only: it clears one holding an
// address of another pool and refuses it the address it is pinned to
// (AllocationFailed: "not compatible with requested address pool"), so
// once the address moves into the class's pool the Service would lose it.
func (h *handover) Tie(svc *corev1.Service) string {
	keys := h.tyingKeys(svc)
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf("names IPAddressPool %s in %s, and MetalLB gives it no address of another pool",
		svc.Annotations[keys[0]], strings.Join(keys, " and "))
}

// tyingKeys are the pool annotations of svc that tie it: none unless the
// pool MetalLB reads (the current spelling wins over the legacy one when
// present, even empty) is another than the class's; then every spelling
// naming another pool, so that none takes over once the other goes.
func (h *handover) tyingKeys(svc *corev1.Service) []string {
	ours := h.pool.GetName()
	if pool := requestedPool(svc); pool == "" || pool == ours {
		return nil
	}
	var out []string
	for _, key := range []string{annotationAddressPool, annotationLegacyAddressPool} {
		if v := svc.Annotations[key]; v != "" && v != ours {
			out = append(out, key)
		}
	}
	return out
}

// requestedPool is the pool svc names, as MetalLB reads it.
func requestedPool(svc *corev1.Service) string {
	if v, ok := svc.Annotations[annotationAddressPool]; ok {
		return v
	}
	return svc.Annotations[annotationLegacyAddressPool]
}

// Untie removes the pool annotations that tie svc, and MetalLB's record of
// the pool it allocated from, in one patch of the Service as it is now.
// Without a named pool MetalLB keeps a Service's address in whichever pool
// holds it, so it keeps it now and after the handover; and it writes its
// record back once it has processed the Service (Seen).
func (h *handover) Untie(ctx context.Context, c client.Client, svc *corev1.Service) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		now := &corev1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), now); err != nil {
			return err
		}
		if now.UID != svc.UID {
			return fmt.Errorf("the Service %s/%s was re-created since it was read", svc.Namespace, svc.Name)
		}
		keys := h.tyingKeys(now)
		if len(keys) == 0 {
			return nil
		}
		orig := now.DeepCopy()
		for _, key := range append(keys, annotationAllocatedFromPool) {
			delete(now.Annotations, key)
		}
		return c.Patch(ctx, now, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
}

// Seen: MetalLB records, on every Service it gives an address, the pool it
// came from, and writes it back whenever it processes one without it.
func (h *handover) Seen(svc *corev1.Service) bool {
	return svc.Annotations[annotationAllocatedFromPool] != ""
}

// Moved: MetalLB records the class's pool as the one svc's address is from.
func (h *handover) Moved(svc *corev1.Service) bool {
	return svc.Annotations[annotationAllocatedFromPool] == h.pool.GetName()
}

// Steps say which pools are written, shrunk and deleted.
func (h *handover) Steps() []string {
	var out []string
	if h.create {
		out = append(out, fmt.Sprintf("create IPAddressPool and advertisement %s (as metallb-iad renders them)", h.pool.GetName()))
	}
	for _, s := range h.shrinks {
		if len(s.remaining) == 0 {
			out = append(out, fmt.Sprintf("delete IPAddressPool %s (%s): all of it moves to the class's pool %s", s.pool.GetName(), joinRanges(s.before), h.pool.GetName()))
		} else {
			out = append(out, fmt.Sprintf("shrink IPAddressPool %s from %s to %s", s.pool.GetName(), joinRanges(s.before), joinRanges(s.remaining)))
		}
	}
	return out
}

func joinRanges(rs []ipaddr.Range) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}

// unchanged reads s's pool again, nil when it is gone. MetalLB writes its
// status as it assigns addresses (and the untie makes it process
// Services), so it is the pool's addresses that must still be those the
// handover was planned with; the write that follows is conditional on
// this read.
func (s poolShrink) unchanged(ctx context.Context, c client.Client) (*unstructured.Unstructured, error) {
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	if err := c.Get(ctx, client.ObjectKeyFromObject(s.pool), pool); err != nil {
		if apierrors.IsNotFound(err) && len(s.remaining) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("reading IPAddressPool %s: %w", s.pool.GetName(), err)
	}
	if now, _ := params.PoolRanges(pool); !slices.Equal(now, s.before) || pool.GetUID() != s.pool.GetUID() {
		return nil, fmt.Errorf("IPAddressPool %s changed since the handover was planned (%s, now %s); run it again",
			pool.GetName(), joinRanges(s.before), joinRanges(now))
	}
	return pool, nil
}

// Apply moves the class's ranges out of the other pools without MetalLB
// ever seeing an assigned address outside every pool. MetalLB refuses a
// configuration whose pools overlap and keeps the one it has; it does not
// refuse one that leaves an assigned address in no pool, it takes the
// address away. So the class's pool is written first, while the old pools
// still cover its ranges (MetalLB keeps its old configuration), and only
// then are the old pools shrunk (MetalLB moves every assignment to the
// class's pool at once). The driver, which refuses to render a class over
// another pool, renders it once the overlap is gone.
func (h *handover) Apply(ctx context.Context, c client.Client) error {
	if h.create {
		for _, obj := range []*unstructured.Unstructured{h.pool, h.adv} {
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
				return fmt.Errorf("writing %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	for _, s := range h.shrinks {
		pool, err := s.unchanged(ctx, c)
		if err != nil {
			return err
		}
		if pool == nil {
			continue // deleted already
		}
		if len(s.remaining) == 0 {
			rv := pool.GetResourceVersion()
			if err := c.Delete(ctx, pool, client.Preconditions{ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting IPAddressPool %s: %w", pool.GetName(), err)
			}
			continue
		}
		orig := pool.DeepCopy()
		remaining := make([]string, len(s.remaining))
		for i, r := range s.remaining {
			remaining[i] = r.String()
		}
		if err := unstructured.SetNestedStringSlice(pool.Object, remaining, "spec", "addresses"); err != nil {
			return err
		}
		if err := c.Patch(ctx, pool, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("shrinking IPAddressPool %s: %w", pool.GetName(), err)
		}
	}
	return nil
}
