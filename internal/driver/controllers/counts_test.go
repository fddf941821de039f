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
	"testing"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// counts writes an AddressCounts: total, then IPv4 and IPv6 (-1: absent).
func counts(total, v4, v6 int64) *v1alpha1.AddressCounts {
	c := &v1alpha1.AddressCounts{Total: total}
	if v4 >= 0 {
		c.IPv4 = &v4
	}
	if v6 >= 0 {
		c.IPv6 = &v6
	}
	return c
}

func TestClassCounts(t *testing.T) {
	v4, v6, both := []v1alpha1.IPFamily{v1alpha1.IPv4}, []v1alpha1.IPFamily{v1alpha1.IPv6}, []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6}
	const huge = math.MaxInt64
	cases := []struct {
		name                       string
		served                     []v1alpha1.IPFamily
		capacity                   *driver.Counts
		used, outside              driver.Counts
		wantCap, wantUsed, wantAvl *v1alpha1.AddressCounts
	}{
		{"an empty IPv4 /28", v4, &driver.Counts{IPv4: 16}, driver.Counts{}, driver.Counts{},
			counts(16, 16, -1), counts(0, 0, -1), counts(16, 16, -1)},
		{"three addresses used", v4, &driver.Counts{IPv4: 16}, driver.Counts{IPv4: 3}, driver.Counts{},
			counts(16, 16, -1), counts(3, 3, -1), counts(13, 13, -1)},
		{"dual-stack, per family", both, &driver.Counts{IPv4: 16, IPv6: 16}, driver.Counts{IPv4: 2, IPv6: 1}, driver.Counts{},
			counts(32, 16, 16), counts(3, 2, 1), counts(29, 14, 15)},
		{"an address kept outside the ranges takes nothing from them", v4, &driver.Counts{IPv4: 16}, driver.Counts{IPv4: 3}, driver.Counts{IPv4: 1},
			counts(16, 16, -1), counts(3, 3, -1), counts(14, 14, -1)},
		{"a full class has none available, never fewer", v4, &driver.Counts{IPv4: 2}, driver.Counts{IPv4: 3}, driver.Counts{},
			counts(2, 2, -1), counts(3, 3, -1), counts(0, 0, -1)},
		{"a family no longer served shows while it has addresses", v6, &driver.Counts{IPv6: 16}, driver.Counts{IPv4: 1, IPv6: 1}, driver.Counts{IPv4: 1},
			counts(16, 0, 16), counts(2, 1, 1), counts(15, 0, 15)},
		{"a range beyond an int64 stays at its ceiling", v6, &driver.Counts{IPv6: huge}, driver.Counts{IPv6: 5}, driver.Counts{},
			counts(huge, -1, huge), counts(5, -1, 5), counts(huge, -1, huge)},
		{"the total saturates", both, &driver.Counts{IPv4: 16, IPv6: huge}, driver.Counts{}, driver.Counts{},
			counts(huge, 16, huge), counts(0, 0, 0), counts(huge, 16, huge)},
		{"never rendered: only the count of addresses", nil, nil, driver.Counts{IPv4: 2}, driver.Counts{},
			nil, counts(2, 2, -1), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			gotCap, gotUsed, gotAvl := classCounts(tc.served, tc.capacity, tc.used, tc.outside)
			g.Expect(gotCap).To(Equal(tc.wantCap), "capacity")
			g.Expect(gotUsed).To(Equal(tc.wantUsed), "used")
			g.Expect(gotAvl).To(Equal(tc.wantAvl), "available")
		})
	}
}

func TestCountRanges(t *testing.T) {
	g := NewWithT(t)
	parse := func(s string) ipaddr.Range {
		r, err := ipaddr.ParseRange(s)
		g.Expect(err).NotTo(HaveOccurred())
		return r
	}
	ranges := make([]ipaddr.Range, 0, 5)
	ranges = append(ranges, parse("198.51.100.0/28"), parse("203.0.113.10-203.0.113.12"), parse("2001:db8::/124"))
	g.Expect(driver.CountRanges(ranges, ipaddr.Range.Size)).To(Equal(driver.Counts{IPv4: 19, IPv6: 16}))
	g.Expect(driver.CountRanges(ranges, func(r ipaddr.Range) int64 { return r.UsableSize(true) })).To(Equal(driver.Counts{IPv4: 18, IPv6: 16}), "198.51.100.0 left out")

	wide := append(ranges, parse("2001:db8:1::/64"), parse("2001:db8:2::/64"))
	g.Expect(driver.CountRanges(wide, ipaddr.Range.Size)).To(Equal(driver.Counts{IPv4: 19, IPv6: math.MaxInt64}))
	g.Expect(driver.Counts{IPv4: 19, IPv6: math.MaxInt64}.Total()).To(Equal(int64(math.MaxInt64)))
	g.Expect(countsOf(counts(19, 3, 16))).To(Equal(&driver.Counts{IPv4: 3, IPv6: 16}))
	g.Expect(countsOf(nil)).To(BeNil())
	ips := []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("198.51.100.2")}
	g.Expect(countAddrs(ips)).To(Equal(driver.Counts{IPv4: 2, IPv6: 1}))
}
