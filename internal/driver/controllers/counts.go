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

package controllers

import (
	"math"
	"net/netip"
	"slices"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// countAddrs counts ips by family.
func countAddrs(ips []netip.Addr) driver.Counts {
	var c driver.Counts
	for _, ip := range ips {
		if ip.Is4() {
			c.IPv4++
		} else {
			c.IPv6++
		}
	}
	return c
}

func countOf(c driver.Counts, f v1alpha1.IPFamily) int64 {
	if f == v1alpha1.IPv4 {
		return c.IPv4
	}
	return c.IPv6
}

// countsOf reads a count the driver wrote back, nil for none.
func countsOf(c *v1alpha1.AddressCounts) *driver.Counts {
	if c == nil {
		return nil
	}
	out := &driver.Counts{}
	if c.IPv4 != nil {
		out.IPv4 = *c.IPv4
	}
	if c.IPv6 != nil {
		out.IPv6 = *c.IPv6
	}
	return out
}

// classCounts derives a class's status.capacity, used and available. served
// are the families the class's ranges serve and capacity what they offer
// (nil while nothing was ever rendered: no capacity, nothing available is
// known); used counts the class's addresses and outside those of them
// outside its ranges, which take nothing from the ranges. A family appears
// when the class serves it or has an address of it.
func classCounts(served []v1alpha1.IPFamily, capacity *driver.Counts, used, outside driver.Counts) (capacityOut, usedOut, availableOut *v1alpha1.AddressCounts) {
	var families []v1alpha1.IPFamily
	for _, f := range []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6} {
		if slices.Contains(served, f) || countOf(used, f) > 0 {
			families = append(families, f)
		}
	}
	usedOut = perFamily(families, func(f v1alpha1.IPFamily) int64 { return countOf(used, f) })
	if capacity == nil {
		return nil, usedOut, nil
	}
	available := func(f v1alpha1.IPFamily) int64 {
		offered := countOf(*capacity, f)
		if offered == math.MaxInt64 {
			return offered // "at least that many" stays so
		}
		return max(0, offered-(countOf(used, f)-countOf(outside, f)))
	}
	return perFamily(families, func(f v1alpha1.IPFamily) int64 { return countOf(*capacity, f) }), usedOut, perFamily(families, available)
}

// perFamily is count's AddressCounts over families.
func perFamily(families []v1alpha1.IPFamily, count func(v1alpha1.IPFamily) int64) *v1alpha1.AddressCounts {
	out := &v1alpha1.AddressCounts{}
	for _, f := range families {
		n := count(f)
		out.Total = driver.Counts{IPv4: out.Total, IPv6: n}.Total() // saturating
		if f == v1alpha1.IPv4 {
			out.IPv4 = &n
		} else {
			out.IPv6 = &n
		}
	}
	return out
}
