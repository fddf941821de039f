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

package params

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/address-controller/internal/ipaddr"
)

func foreignPool(addresses any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if addresses != nil {
		u.Object["spec"].(map[string]any)["addresses"] = addresses
	}
	u.SetGroupVersionKind(IPAddressPoolGVK)
	u.SetNamespace("metallb-system")
	u.SetName("hand-written")
	return u
}

func TestPoolRanges(t *testing.T) {
	tests := []struct {
		name    string
		pool    *unstructured.Unstructured
		want    []string
		wantErr string
	}{
		{"no addresses", foreignPool(nil), nil, ""},
		{"both syntaxes, host bits masked as MetalLB does",
			foreignPool([]any{"198.51.100.7/24", "10.0.0.1 -10.0.0.9", "2001:db8::/120"}),
			[]string{"198.51.100.0/24", "10.0.0.1-10.0.0.9", "2001:db8::/120"}, ""},
		{"unreadable entries named, the rest returned",
			foreignPool([]any{"10.0.0.0/24", "bogus", "10.0.1.9-10.0.1.1"}),
			[]string{"10.0.0.0/24"},
			`IPAddressPool metallb-system/hand-written: spec.addresses[1]: "bogus" is neither a CIDR nor an a.b.c.d-e.f.g.h range; ` +
				`spec.addresses[2]: "10.0.1.9-10.0.1.1" is backwards: 10.0.1.9 comes after 10.0.1.1`},
		{"addresses of the wrong type", foreignPool("10.0.0.0/24"), nil,
			"IPAddressPool metallb-system/hand-written: spec.addresses: .spec.addresses accessor error: 10.0.0.0/24 is of the type string, expected []interface{}"},
		{"our own rendering reads back", Pool("public", "metallb-system",
			&Parameters{Ranges: []ipaddr.Range{rng(t, "10.0.0.0/24")}}, addrs("10.0.1.1")),
			[]string{"10.0.0.0/24", "10.0.1.1/32"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ranges, err := PoolRanges(tt.pool)
			if gotErr := errString(err); gotErr != tt.wantErr {
				t.Fatalf("PoolRanges error\n got: %s\nwant: %s", gotErr, tt.wantErr)
			}
			var got []string
			for _, r := range ranges {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("PoolRanges = %v, want %v", got, tt.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestOverlaps(t *testing.T) {
	ranges := func(ss ...string) []ipaddr.Range {
		out := make([]ipaddr.Range, 0, len(ss))
		for _, s := range ss {
			out = append(out, rng(t, s))
		}
		return out
	}
	tests := []struct {
		name         string
		ours, theirs []ipaddr.Range
		want         []string
	}{
		{"nothing", nil, nil, nil},
		{"disjoint and adjacent", ranges("10.0.0.0/24"), ranges("10.0.1.0/24", "9.255.255.255/32"), nil},
		{"across families never", ranges("0.0.0.0/0"), ranges("::/0"), nil},
		{"every pair, in order",
			ranges("198.51.100.0/24", "2001:db8::/120"),
			ranges("198.51.100.128-198.51.100.200", "2001:db8::ff/128", "198.51.100.0/25"),
			[]string{
				"198.51.100.0/24 overlaps 198.51.100.128-198.51.100.200",
				"198.51.100.0/24 overlaps 198.51.100.0/25",
				"2001:db8::/120 overlaps 2001:db8::ff/128",
			}},
	}
	for _, tt := range tests {
		if got := Overlaps(tt.ours, tt.theirs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Overlaps = %q, want %q", tt.name, got, tt.want)
		}
	}
}
