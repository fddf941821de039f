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
		h.refuses(ip) == "" && svc.Labels[LabelWithdrawn] == ""
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
		if len(s.remaining) == 0 {
			rv := s.pool.GetResourceVersion()
			if err := c.Delete(ctx, s.pool, client.Preconditions{ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting IPAddressPool %s: %w", s.pool.GetName(), err)
			}
			continue
		}
		orig := s.pool.DeepCopy()
		remaining := make([]string, len(s.remaining))
		for i, r := range s.remaining {
			remaining[i] = r.String()
		}
		if err := unstructured.SetNestedStringSlice(s.pool.Object, remaining, "spec", "addresses"); err != nil {
			return err
		}
		if err := c.Patch(ctx, s.pool, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("shrinking IPAddressPool %s: %w", s.pool.GetName(), err)
		}
	}
	return nil
}
