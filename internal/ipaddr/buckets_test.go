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
	"fmt"
	"slices"
	"testing"
)

func TestBuckets(t *testing.T) {
	v4s := func(from, to int) []string {
		var keys []string
		for b := from; b <= to; b++ {
			keys = append(keys, fmt.Sprintf("v4/%d", b))
		}
		return keys
	}
	tests := map[string][]string{
		"10.0.0.0/8":                 {"v4/10"},
		"10.1.2.3/32":                {"v4/10"},
		"10.255.255.0-11.0.0.5":      {"v4/10", "v4/11"},
		"0.0.0.0/32":                 {"v4/0"},
		"255.255.255.255/32":         {"v4/255"},
		"10.0.0.0-73.255.255.255":    v4s(10, 73),
		"10.0.0.0-74.0.0.0":          {WideV4},
		"0.0.0.0/0":                  {WideV4},
		"2001:db8::/32":              {"v6/2001:db8"},
		"2001:db8::1/128":            {"v6/2001:db8"},
		"2001:db8::/31":              {"v6/2001:db8", "v6/2001:db9"},
		"2001:db8:ffff::-2001:db9::": {"v6/2001:db8", "v6/2001:db9"},
		"::1/128":                    {"v6/0:0"},
		"2001:c00::/25":              {WideV6},
		"::/0":                       {WideV6},
	}
	for in, want := range tests {
		if got := mustRange(t, in).Buckets(); !slices.Equal(got, want) {
			t.Errorf("Buckets(%s) = %v, want %v", in, got, want)
		}
	}
	if got := mustRange(t, "2001:d80::/26").Buckets(); len(got) != 64 || got[0] != "v6/2001:d80" || got[63] != "v6/2001:dbf" {
		t.Errorf("Buckets(2001:d80::/26) = %v, want the 64 keys v6/2001:d80 to v6/2001:dbf", got)
	}
}

func TestLookupAndIndexKeys(t *testing.T) {
	tests := []struct {
		r             string
		index, lookup []string
	}{
		{"10.1.0.0/16", []string{"v4/10", FamilyV4}, []string{"v4/10", WideV4}},
		{"0.0.0.0/0", []string{WideV4, FamilyV4}, []string{FamilyV4}},
		{"2001:db8::/64", []string{"v6/2001:db8", FamilyV6}, []string{"v6/2001:db8", WideV6}},
		{"::/0", []string{WideV6, FamilyV6}, []string{FamilyV6}},
	}
	for _, tt := range tests {
		r := mustRange(t, tt.r)
		if got := r.IndexKeys(); !slices.Equal(got, tt.index) {
			t.Errorf("IndexKeys(%s) = %v, want %v", tt.r, got, tt.index)
		}
		if got := r.LookupKeys(); !slices.Equal(got, tt.lookup) {
			t.Errorf("LookupKeys(%s) = %v, want %v", tt.r, got, tt.lookup)
		}
	}
}

// TestOverlappingRangesMeetInTheIndex is the property callers rely on: two
// overlapping ranges share a bucket or one of them is wide, and so the
// lookup keys of either always hit an index key of the other.
func TestOverlappingRangesMeetInTheIndex(t *testing.T) {
	rng := newRand(t)
	checked := 0
	for i := 0; checked < 5000; i++ {
		a, b := randomRange(rng, i%2 == 0), randomRange(rng, i%2 == 0)
		if !a.Overlaps(b) {
			// Most random pairs are disjoint; make b start inside a instead.
			b.First = a.Last
			if b.Last.Less(b.First) {
				b.Last = b.First
			}
		}
		if !a.Overlaps(b) {
			t.Fatalf("test bug: %s and %s do not overlap", a, b)
		}
		checked++
		shared := slices.ContainsFunc(a.Buckets(), func(k string) bool { return slices.Contains(b.Buckets(), k) })
		if !shared && !a.wide() && !b.wide() {
			t.Fatalf("%s %v and %s %v overlap but share no bucket", a, a.Buckets(), b, b.Buckets())
		}
		for _, pair := range [][2]Range{{a, b}, {b, a}} {
			lookup, index := pair[0].LookupKeys(), pair[1].IndexKeys()
			if !slices.ContainsFunc(lookup, func(k string) bool { return slices.Contains(index, k) }) {
				t.Fatalf("lookup %v of %s misses index %v of %s", lookup, pair[0], index, pair[1])
			}
		}
	}
}
