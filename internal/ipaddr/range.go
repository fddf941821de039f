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

package ipaddr

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Range is an inclusive span of addresses of one family, First <= Last. It is
// the unit MetalLB's IPAddressPool speaks: a CIDR is just a range that happens
// to be one prefix.
type Range struct {
	First, Last netip.Addr
}

// SingleAddress is the range holding a alone.
func SingleAddress(a netip.Addr) Range {
	a = a.WithZone("")
	return Range{First: a, Last: a}
}

// ParseRange parses the two syntaxes of MetalLB's spec.addresses: a CIDR
// ("203.0.113.0/24", "2001:db8::/120") or an inclusive range
// ("198.51.100.10-198.51.100.20", spaces around '-' allowed). It is stricter
// than MetalLB on purpose: a CIDR with host bits set is an error rather than
// silently widened, zones and IPv4-mapped IPv6 addresses are refused (Go's
// net package, and so MetalLB, would treat the latter as IPv4), and a range
// must not be backwards.
//
// Its messages name the input and its parts, never the parser's own reasons:
// the drivers' admission policies (charts/*/templates/_class_parameters.tpl)
// write the same messages in CEL, which can tell what is wrong with a range
// but not why Go's parser stopped. test/charts holds the two to each other.
func ParseRange(s string) (Range, error) {
	return parseRange(s, false)
}

// ParseRangeLenient is ParseRange except that a CIDR's host bits are masked
// off, as net.ParseCIDR and therefore MetalLB do. Use it to read ranges
// someone else wrote, such as another IPAddressPool, so that we see what
// MetalLB sees.
func ParseRangeLenient(s string) (Range, error) {
	return parseRange(s, true)
}

func parseRange(s string, maskHostBits bool) (Range, error) {
	text := strings.TrimSpace(s)
	switch {
	case text == "":
		return Range{}, errors.New("the range is empty")
	case strings.Contains(text, "-") && strings.Contains(text, "/"):
		return Range{}, fmt.Errorf("%q is neither a CIDR nor an a.b.c.d-e.f.g.h range: it mixes both", s)
	case strings.Contains(text, "-"):
		return parseDashed(s, text)
	case strings.Contains(text, "/"):
		return parseCIDR(s, text, maskHostBits)
	}
	if a, err := netip.ParseAddr(text); err == nil && a.Zone() == "" && !a.Is4In6() {
		return Range{}, fmt.Errorf("%q is neither a CIDR nor an a.b.c.d-e.f.g.h range; for the single address write %s",
			s, SingleAddress(a))
	}
	return Range{}, fmt.Errorf("%q is neither a CIDR nor an a.b.c.d-e.f.g.h range", s)
}

func parseCIDR(s, text string, maskHostBits bool) (Range, error) {
	slash := strings.LastIndexByte(text, '/')
	addrText, bitsText := text[:slash], text[slash+1:]
	a, err := netip.ParseAddr(addrText)
	if err != nil {
		return Range{}, fmt.Errorf("%q is neither a CIDR nor an a.b.c.d-e.f.g.h range: %q is not an IP address", s, addrText)
	}
	if a.Zone() != "" {
		return Range{}, fmt.Errorf("%q has a zone (%%%s); zones are not allowed", s, a.Zone())
	}
	if a.Is4In6() {
		return Range{}, fmt.Errorf("%q is IPv4-mapped IPv6; write the IPv4 form", s)
	}
	n, err := strconv.Atoi(bitsText)
	if err != nil || n < 0 || n > a.BitLen() || strconv.Itoa(n) != bitsText {
		return Range{}, fmt.Errorf("%q has prefix length %q; want a number from 0 to %d", s, bitsText, a.BitLen())
	}
	p := netip.PrefixFrom(a, n)
	if p.Masked().Addr() != a && !maskHostBits {
		return Range{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, p.Masked())
	}
	r := Range{First: p.Masked().Addr(), Last: lastOf(p)}
	if r.Last.Is4In6() {
		return Range{}, fmt.Errorf("%q ends in ::ffff:0:0/96, the IPv4-mapped IPv6 addresses", s)
	}
	return r, nil
}

func parseDashed(s, text string) (Range, error) {
	ends := strings.Split(text, "-")
	if len(ends) != 2 {
		return Range{}, fmt.Errorf("%q is not a range: it has more than one '-'", s)
	}
	var r Range
	for i, dst := range []*netip.Addr{&r.First, &r.Last} {
		a, err := parseEnd(strings.TrimSpace(ends[i]))
		if err != nil {
			return Range{}, fmt.Errorf("%q is not a valid range: %w", s, err)
		}
		*dst = a
	}
	if r.First.Is4() != r.Last.Is4() {
		return Range{}, fmt.Errorf("%q mixes IPv4 and IPv6", s)
	}
	if r.Last.Less(r.First) {
		return Range{}, fmt.Errorf("%q is backwards: %s comes after %s", s, r.First, r.Last)
	}
	return r, nil
}

// parseEnd parses one end of a dashed range.
func parseEnd(text string) (netip.Addr, error) {
	if text == "" {
		return netip.Addr{}, errors.New("the address is empty")
	}
	a, err := netip.ParseAddr(text)
	switch {
	case err != nil:
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", text)
	case a.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%q has a zone (%%%s); zones are not allowed", text, a.Zone())
	case a.Is4In6():
		return netip.Addr{}, fmt.Errorf("%q is IPv4-mapped IPv6; write the IPv4 form", text)
	}
	return a, nil
}

// String is the range in MetalLB syntax: a CIDR when the range is exactly one
// prefix (a single address is a /32 or /128), "first-last" otherwise.
// ParseRange(r.String()) == r for every valid range.
func (r Range) String() string {
	if !r.First.IsValid() || !r.Last.IsValid() {
		return "invalid range"
	}
	if p, ok := r.prefix(); ok {
		return p.String()
	}
	return r.First.String() + "-" + r.Last.String()
}

// prefix is the range as a single prefix, if it is one.
func (r Range) prefix() (netip.Prefix, bool) {
	first := toUint128(r.First)
	span := toUint128(r.Last).sub(first)
	host := span.bitLen()
	if span != lowBits(host) || !first.and(span).isZero() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(r.First, r.First.BitLen()-host), true
}

// Prefixes is the shortest list of prefixes covering exactly the range, in
// address order. MetalLB thinks of a range this way, for instance when it
// checks a BGP aggregation length against it.
func (r Range) Prefixes() []netip.Prefix {
	var out []netip.Prefix
	is4, bitLen := r.Is4(), r.First.BitLen()
	last := toUint128(r.Last)
	for start := toUint128(r.First); ; {
		host := min(start.trailingZeros(), bitLen)
		for start.or(lowBits(host)).cmp(last) > 0 {
			host--
		}
		out = append(out, netip.PrefixFrom(start.addr(is4), bitLen-host))
		end := start.or(lowBits(host))
		if end == last {
			return out
		}
		start = end.add1()
	}
}

// Is4 reports whether the range holds IPv4 addresses.
func (r Range) Is4() bool { return r.First.Is4() }

// Contains reports whether a lies in the range; never across families.
func (r Range) Contains(a netip.Addr) bool {
	a = a.WithZone("")
	return a.BitLen() == r.First.BitLen() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// Overlaps reports whether the two ranges share an address; never across
// families.
func (r Range) Overlaps(o Range) bool {
	return r.First.BitLen() == o.First.BitLen() && r.First.Compare(o.Last) <= 0 && o.First.Compare(r.Last) <= 0
}
