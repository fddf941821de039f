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
	"net/netip"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Shrink is one pool of someone else's that overlaps the class: it keeps
// Remaining, or is deleted when nothing remains.
type Shrink struct {
	Pool      string
	Before    []string
	Remaining []string
	pool      *unstructured.Unstructured
}

// Handover is what handing the class's ranges over from other pools does.
type Handover struct {
	// Create: the class's pool and advertisement do not exist yet.
	Create  bool
	Shrinks []Shrink
	// Blockers are Services that would lose their address: the class's
	// pool would not take it.
	Blockers []string
	// Unimported are Services holding addresses that move into the class's
	// pool without being imported; they keep them, outside the ledger.
	Unimported []string

	pool, adv *unstructured.Unstructured
}

// planHandover works out how the class's ranges leave the other pools. o
// must have been observed with an unrestricted scope: pools are
// cluster-wide.
func planHandover(ctx context.Context, c client.Reader, o *observed, plan Plan, metallbNamespace string) (*Handover, error) {
	h := &Handover{}
	h.pool, h.adv = metallb.Rendering(o.class, metallbNamespace, o.params, o.keep)
	ours, _ := params.PoolRanges(h.pool)
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(params.IPAddressPoolGVK)
	err := c.Get(ctx, client.ObjectKeyFromObject(h.pool), existing)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	h.Create = apierrors.IsNotFound(err)

	pools := &unstructured.UnstructuredList{}
	pools.SetGroupVersionKind(params.IPAddressPoolGVK.GroupVersion().WithKind("IPAddressPoolList"))
	if err := c.List(ctx, pools, client.InNamespace(metallbNamespace)); err != nil {
		return nil, fmt.Errorf("listing IPAddressPools: %w", err)
	}
	var moving []ipaddr.Range
	for i := range pools.Items {
		pool := &pools.Items[i]
		if pool.GetName() == h.pool.GetName() {
			continue
		}
		theirs, _ := params.PoolRanges(pool)
		if len(params.Overlaps(ours, theirs)) == 0 {
			continue
		}
		s := Shrink{Pool: pool.GetName(), pool: pool}
		for _, r := range theirs {
			s.Before = append(s.Before, r.String())
		}
		left := ipaddr.Subtract(theirs, ours)
		for _, r := range left {
			s.Remaining = append(s.Remaining, r.String())
		}
		moving = append(moving, ipaddr.Subtract(theirs, left)...)
		h.Shrinks = append(h.Shrinks, s)
	}

	inv := o.inv
	inv.Ranges = ours
	for i := range o.all {
		s := &o.all[i]
		for _, ip := range ServiceOf(s, "").Ingress {
			if !slices.ContainsFunc(moving, func(r ipaddr.Range) bool { return r.Contains(ip) }) {
				continue
			}
			if !inv.usable(ip) || s.Labels[metallb.LabelWithdrawn] != "" {
				h.Blockers = append(h.Blockers, fmt.Sprintf("Service %s/%s holds %s, which IPAddressPool %s would not give it", s.Namespace, s.Name, ip, h.pool.GetName()))
			}
		}
	}
	for _, im := range plan.Imports {
		if im.Action != ActionImported {
			h.Unimported = append(h.Unimported, fmt.Sprintf("Service %s (%s): %s", im.Service.Key(), joinIPs(im.Addresses), im.Action))
		}
	}
	for _, s := range plan.Skips {
		if len(s.Addresses) > 0 && slices.ContainsFunc(s.Addresses, func(ip netip.Addr) bool {
			return slices.ContainsFunc(moving, func(r ipaddr.Range) bool { return r.Contains(ip) })
		}) {
			h.Unimported = append(h.Unimported, fmt.Sprintf("Service %s (%s): skipped, %s", s.Service.Key(), joinIPs(s.Addresses), s.Reason))
		}
	}
	return h, nil
}

// handover moves the class's ranges out of the other pools without MetalLB
// ever seeing an assigned address outside every pool. MetalLB refuses a
// configuration whose pools overlap and keeps the one it has; it does not
// refuse one that leaves an assigned address in no pool, it takes the
// address away. So the class's pool is written first, while the old pools
// still cover its ranges (MetalLB keeps its old configuration), and only
// then are the old pools shrunk (MetalLB moves every assignment to the
// class's pool at once). The driver, which refuses to render a class over
// another pool, renders it once the overlap is gone.
func handover(ctx context.Context, c client.Client, h *Handover, className string, timeout time.Duration) error {
	if len(h.Blockers) > 0 {
		return fmt.Errorf("the handover would take addresses away: %v", h.Blockers)
	}
	if h.Create {
		for _, obj := range []*unstructured.Unstructured{h.pool, h.adv} {
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(metallb.FieldOwner), client.ForceOwnership); err != nil {
				return fmt.Errorf("writing %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	for _, s := range h.Shrinks {
		if len(s.Remaining) == 0 {
			rv := s.pool.GetResourceVersion()
			if err := c.Delete(ctx, s.pool, client.Preconditions{ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting IPAddressPool %s: %w", s.Pool, err)
			}
			continue
		}
		orig := s.pool.DeepCopy()
		if err := unstructured.SetNestedStringSlice(s.pool.Object, s.Remaining, "spec", "addresses"); err != nil {
			return err
		}
		if err := c.Patch(ctx, s.pool, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("shrinking IPAddressPool %s: %w", s.Pool, err)
		}
	}
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reason string
	err := wait.PollUntilContextCancel(deadline, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		class := &v1alpha1.IPAddressClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: className}, class); err != nil {
			return false, err
		}
		for _, cond := range class.Status.Conditions {
			if cond.Type == v1alpha1.ConditionRendered {
				reason = cond.Reason + ": " + cond.Message
				return cond.Status == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the pools are handed over, but IPAddressClass %s is not Rendered yet (%s); is metallb-iad running? %w", className, reason, err)
	}
	return nil
}
