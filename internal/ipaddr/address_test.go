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
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestParseAddress(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "203.0.113.7", want: "203.0.113.7"},
		{in: "2001:db8::7", want: "2001:db8::7"},
		{in: "2001:DB8:0:0:0:0:0:7", want: "2001:db8::7"},
		{in: "::", want: "::"},
		{in: "::ffff:1.2.3.4", want: "::ffff:1.2.3.4"},
		{in: "", wantErr: "the address is empty"},
		{in: "203.0.113.7/32", wantErr: `"203.0.113.7/32" is a prefix, not a single address`},
		{in: "fe80::1%eth0", wantErr: `"fe80::1%eth0" has a zone (%eth0); zones are not allowed`},
		{in: "010.0.0.1", wantErr: `"010.0.0.1" is not an IP address: IPv4 field has octet with leading zero`},
		{in: "10.0.0.300", wantErr: `"10.0.0.300" is not an IP address: IPv4 field has value >255`},
		{in: "10.0.0", wantErr: `"10.0.0" is not an IP address: IPv4 address too short`},
		{in: " 10.0.0.1", wantErr: `" 10.0.0.1" is not an IP address: unexpected character (at " 10.0.0.1")`},
		{in: "2001:db8::1::2", wantErr: `"2001:db8::1::2" is not an IP address: multiple :: in address (at ":2")`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseAddress(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseAddress(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("ParseAddress(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseAddressKeepsMappedAsIPv6(t *testing.T) {
	a, err := ParseAddress("::ffff:1.2.3.4")
	if err != nil || a.Is4() || !a.Is4In6() {
		t.Fatalf("ParseAddress(::ffff:1.2.3.4) = %v, %v; want an IPv4-mapped IPv6 address", a, err)
	}
}

func TestObjectName(t *testing.T) {
	tests := map[string]string{
		"203.0.113.7":     "ip-203-0-113-7",
		"0.0.0.0":         "ip-0-0-0-0",
		"2001:db8::7":     "ip-2001-db8--7",
		"::1":             "ip---1",
		"::":              "ip---0",
		"2001:db8::":      "ip-2001-db8--0",
		"1:2:3:4:5:6:7:8": "ip-1-2-3-4-5-6-7-8",
		"::ffff:1.2.3.4":  "ip---ffff-102-304",
		"::ffff:1:2:3:4":  "ip---ffff-1-2-3-4",
		"fe80::1%eth0":    "ip-fe80--1",
	}
	for in, want := range tests {
		if got := ObjectName(netip.MustParseAddr(in)); got != want {
			t.Errorf("ObjectName(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestObjectNameIsInjectiveAndValid guards the two promises the ledger
// relies on: one name per address, and a name the API server accepts.
func TestObjectNameIsInjectiveAndValid(t *testing.T) {
	seen := map[string]netip.Addr{}
	for _, a := range sampleAddrs(t) {
		name := ObjectName(a)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("ObjectName(%s) = %q is not a DNS-1123 subdomain: %v", a, name, errs)
		}
		if prev, ok := seen[name]; ok && prev != a {
			t.Errorf("ObjectName(%s) = ObjectName(%s) = %q", a, prev, name)
		}
		seen[name] = a
	}
	if len(seen) < 5000 {
		t.Fatalf("sample too small: %d distinct addresses", len(seen))
	}
}

// sampleAddrs mixes hand-picked edge cases with random addresses whose groups
// are often zero, so that "::" appears in every position.
func sampleAddrs(t *testing.T) []netip.Addr {
	t.Helper()
	const random = 3000
	edges := []string{
		"0.0.0.0", "255.255.255.255", "1.2.3.4", "::", "::1", "1::", "2001:db8::",
		"::ffff:1.2.3.4", "::ffff:1:2:3:4", "::102:304", "::1:2:3:4", "1:2:3:4::",
		"0:1::", "::1:0", "1:0:0:1::", "1::1:0:0:1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	}
	out := make([]netip.Addr, 0, len(edges)+2*random)
	for _, s := range edges {
		out = append(out, netip.MustParseAddr(s))
	}
	rng := newRand(t)
	for range random {
		out = append(out, uint128{lo: uint64(rng.Uint32())}.addr(true))
		var groups [8]uint16
		for g := range groups {
			if rng.IntN(2) == 0 {
				groups[g] = uint16(rng.IntN(3) * rng.IntN(0x10000))
			}
		}
		var u uint128
		for g, v := range groups {
			if g < 4 {
				u.hi = u.hi<<16 | uint64(v)
			} else {
				u.lo = u.lo<<16 | uint64(v)
			}
		}
		out = append(out, u.addr(false))
	}
	return out
}
