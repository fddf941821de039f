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

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// RecordedElsewhere is the IPAddress that records ip for someone other than
// claim, if one does: an allocator that offers it for claim offers an
// address it should not, and the placeholder gives it back. With
// provisioner set, only an address of a class that provisioner serves
// counts (one of another driver's class is a ledger mismatch for an admin,
// left recorded).
func RecordedElsewhere(ctx context.Context, c client.Reader, ip netip.Addr, claim *v1alpha1.IPAddressClaim, provisioner string) (*v1alpha1.IPAddress, error) {
	list := &v1alpha1.IPAddressList{}
	if err := c.List(ctx, list, client.MatchingFields{manager.IndexAddressByIP: ip.String()}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		a := &list.Items[i]
		if ref := a.Spec.ClaimRef; ref != nil && ref.UID == claim.UID {
			continue
		}
		if provisioner == "" {
			return a, nil
		}
		class := &v1alpha1.IPAddressClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: a.Spec.ClassName}, class); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			continue
		}
		if class.Spec.Provisioner == provisioner {
			return a, nil
		}
	}
	return nil, nil
}

// OfferedOutside is a request's answer when its allocator gave it ip
// outside ranges, the class's, and no IPAddress records ip: a class's pool
// keeps an address outside its ranges for as long as an IPAddress records
// it, and drops it once the class is rendered after the IPAddress went, so
// the allocator can offer it in between. Nothing records it; once the pool
// drops it, the allocator takes it off the request and gives another, if
// any. ok is false for an address inside the ranges, or with no ranges to
// read (parameters that do not decode leave the earlier rendering).
func OfferedOutside(ranges []ipaddr.Range, ip netip.Addr, allocator string) (res driver.Reservation, ok bool) {
	if len(ranges) == 0 || slices.ContainsFunc(ranges, func(r ipaddr.Range) bool { return r.Contains(ip) }) {
		return res, false
	}
	res.Waiting = fmt.Sprintf("%s gave %s, outside the class's ranges (its pool kept it for an IPAddress that went); waiting for another", allocator, ip)
	return res, true
}
