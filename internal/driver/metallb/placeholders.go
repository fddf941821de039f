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

	corev1 "k8s.io/api/core/v1"

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
	ph, waiting, err := b.Set.Allocation(ctx, claim, class.Name, family, func(ph *corev1.Service) {
		ph.Annotations[annotationAddressPool] = params.PoolName(class.Name)
	})
	if err != nil || waiting != "" {
		return driver.Reservation{Waiting: waiting}, err
	}
	if ph.Labels[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone {
		return b.awaitTombstone(ctx, ph, claim)
	}
	if yielded := ph.Annotations[v1alpha1.AnnotationYieldedTo]; yielded != "" && b.Set.IsAllocation(ph) {
		return b.awaitRightfulHolder(ctx, ph, yielded)
	}
	ip, ok := placeholder.IngressOfFamily(ph, family)
	if !ok {
		return driver.Reservation{Waiting: fmt.Sprintf("Waiting for MetalLB to assign an %s address from pool %s (exhausted, or MetalLB not running)",
			family, params.PoolName(class.Name))}, nil
	}
	if b.Set.IsAllocation(ph) {
		owner, err := placeholder.RecordedElsewhere(ctx, b, ip, claim, b.Provisioner())
		if err != nil {
			return driver.Reservation{}, err
		}
		if owner != nil {
			return b.yield(ctx, ph, claim, owner, ip)
		}
		if res, ok := placeholder.OfferedOutside(classRanges(class), ip, "MetalLB"); ok {
			return res, nil
		}
	}
	if err := b.Set.Record(ctx, ph, ip); err != nil {
		return driver.Reservation{}, err
	}
	return driver.Reservation{Address: ip}, nil
}

// Hold keeps a reserved in MetalLB's books with a placeholder Service pinned
// to it, owned by the address, carrying the address's sharing key so that a
// workload can join it. A placeholder Reserve left for it is adopted; extra
// ones go. A placeholder it creates carries the retry token of the state
// the driver acts in (driver.RetryToken).
func (b *Backend) Hold(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass) (driver.HoldState, error) {
	return b.allocator().Hold(ctx, b.Set, b.secret, b, a, class.Name, func(ph *corev1.Service, created bool, ip netip.Addr, key string) {
		markHold(ph, ip, key)
		if created {
			ph.Annotations[v1alpha1.AnnotationRetry] = driver.RetryToken(ctx)
			b.metrics.holdsCreated.Inc()
		}
	})
}

// allocator is MetalLB, as the holds' conditions name it.
func (b *Backend) allocator() placeholder.Allocator {
	return placeholder.Allocator{Name: "MetalLB", Covers: b.poolCovers,
		Pool: func(class string) string {
			return "IPAddressPool " + b.opts.MetalLBNamespace + "/" + params.PoolName(class)
		}}
}

// markHold pins a hold to its address and gives it the sharing key.
func markHold(ph *corev1.Service, ip netip.Addr, key string) {
	ph.Annotations[annotationLoadBalancerIPs] = ip.String()
	ph.Annotations[annotationAllowSharedIP] = key
	delete(ph.Annotations, annotationAddressPool)
}

// classRanges are class's ranges, none when its parameters do not decode.
func classRanges(class *v1alpha1.IPAddressClass) []ipaddr.Range {
	p, err := params.Decode(class.Spec.Parameters)
	if err != nil {
		return nil
	}
	return p.Ranges
}
