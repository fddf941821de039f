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

package cilium

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// Reserve asks LB-IPAM for an address of family for claim, through an
// allocation placeholder its class's pool selects, and once LB-IPAM has
// assigned one, pins the placeholder to it and labels it with the IPAddress
// name to come.
//
// An address the ledger records for someone else (LB-IPAM may offer one
// while it is between its hold and its carrier) is given back by deleting
// the placeholder: LB-IPAM retries every Service it could not serve on each
// deletion, the rightful holder among them, and the claim asks again.
func (b *Backend) Reserve(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass,
	family v1alpha1.IPFamily) (driver.Reservation, error) {
	ph, waiting, err := b.Set.Allocation(ctx, claim, class.Name, family, func(ph *corev1.Service) {
		ph.Labels[v1alpha1.LabelCiliumPool] = placeholder.LabelValue(class.Name)
	})
	if err != nil || waiting != "" {
		return driver.Reservation{Waiting: waiting}, err
	}
	if ph.DeletionTimestamp != nil {
		return driver.Reservation{Waiting: "Waiting for the previous request to go"}, nil
	}
	ip, ok := placeholder.IngressOfFamily(ph, family)
	if !ok {
		return driver.Reservation{Waiting: fmt.Sprintf(
			"Waiting for Cilium's LB-IPAM to assign an %s address from CiliumLoadBalancerIPPool %s (exhausted, or the operator not running)",
			family, poolName(class.Name))}, nil
	}
	if owner, err := placeholder.RecordedElsewhere(ctx, b, ip, claim, ""); err != nil || owner != nil {
		if err != nil {
			return driver.Reservation{}, err
		}
		log.FromContext(ctx).Info("LB-IPAM offered an address the ledger records; giving it back", "address", ip, "recordedBy", owner.Name)
		if err := b.Set.Delete(ctx, ph); err != nil {
			return driver.Reservation{}, err
		}
		return driver.Reservation{Waiting: fmt.Sprintf("Gave back %s, which IPAddress %s records; asking again", ip, owner.Name)}, nil
	}
	if ranges, err := decode(class); err == nil {
		if res, ok := placeholder.OfferedOutside(ranges, ip, "Cilium's LB-IPAM"); ok {
			return res, nil
		}
	}
	if err := b.Set.Record(ctx, ph, ip); err != nil {
		return driver.Reservation{}, err
	}
	return driver.Reservation{Address: ip}, nil
}

// Hold keeps a reserved in LB-IPAM's books with a placeholder Service pinned
// to it, owned by the address, carrying the address's sharing key (open to
// every namespace: only the driver knows the key) so that a workload can
// join it. A placeholder Reserve left for it is adopted; extra ones go.
func (b *Backend) Hold(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass) (driver.HoldState, error) {
	return b.allocator().Hold(ctx, b.Set, b.secret, b, a, class.Name, func(ph *corev1.Service, _ bool, ip netip.Addr, key string) {
		markHold(ph, class.Name, ip, key)
	})
}

// allocator is LB-IPAM, as the holds' conditions name it.
func (b *Backend) allocator() placeholder.Allocator {
	return placeholder.Allocator{Name: "Cilium's LB-IPAM", Covers: b.poolCovers,
		Pool: func(class string) string { return "CiliumLoadBalancerIPPool " + poolName(class) }}
}

// markHold makes a hold selected by the class's pool, pinned to its address,
// and carrying its sharing key.
func markHold(ph *corev1.Service, class string, ip netip.Addr, key string) {
	ph.Labels[v1alpha1.LabelCiliumPool] = placeholder.LabelValue(class)
	ph.Annotations[annotationIPs] = ip.String()
	ph.Annotations[annotationSharingKey] = key
	ph.Annotations[annotationCrossNamespace] = "*"
}
