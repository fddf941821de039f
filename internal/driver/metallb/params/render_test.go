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
	"net/netip"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func decode(t *testing.T, s string) *Parameters {
	t.Helper()
	p, err := Decode(raw(s))
	if err != nil {
		t.Fatalf("Decode(%s): %v", s, err)
	}
	return p
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestNames(t *testing.T) {
	if PoolName("public") != "iad-public" || AdvertisementName("public") != "iad-public" {
		t.Fatalf("PoolName/AdvertisementName = %q/%q", PoolName("public"), AdvertisementName("public"))
	}
}

func TestPool(t *testing.T) {
	tests := []struct {
		name      string
		params    string
		keep      []netip.Addr
		addresses []any
		avoid     bool
	}{{
		name:      "class ranges merged and sorted",
		params:    `{"addresses":["2001:db8::/120","10.0.0.128/25","10.0.0.0/25","198.51.100.10 - 198.51.100.20"],"avoidBuggyIPs":true}`,
		addresses: []any{"10.0.0.0/24", "198.51.100.10-198.51.100.20", "2001:db8::/120"},
		avoid:     true,
	}, {
		name:      "kept addresses inside the class add nothing",
		params:    `{"addresses":["10.0.0.0/24"]}`,
		keep:      addrs("10.0.0.7", "10.0.0.255"),
		addresses: []any{"10.0.0.0/24"},
	}, {
		name:      "kept addresses outside a shrunk class stay, once each, sorted",
		params:    `{"addresses":["10.0.0.0/25","2001:db8::/120"]}`,
		keep:      addrs("2001:db8::1:5", "10.0.0.200", "10.0.0.3", "10.0.0.129", "10.0.0.200"),
		addresses: []any{"10.0.0.0/25", "2001:db8::/120", "10.0.0.129/32", "10.0.0.200/32", "2001:db8::1:5/128"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Pool("public", "metallb-system", decode(t, tt.params), tt.keep)
			checkMeta(t, u, "IPAddressPool", "iad-public")
			want := map[string]any{"addresses": tt.addresses, "autoAssign": false, "avoidBuggyIPs": tt.avoid}
			if !reflect.DeepEqual(u.Object["spec"], want) {
				t.Fatalf("spec = %#v\nwant %#v", u.Object["spec"], want)
			}
		})
	}
}

func checkMeta(t *testing.T, u *unstructured.Unstructured, kind, name string) {
	t.Helper()
	if u.GetAPIVersion() != "metallb.io/v1beta1" || u.GetKind() != kind {
		t.Errorf("rendered %s %s, want metallb.io/v1beta1 %s", u.GetAPIVersion(), u.GetKind(), kind)
	}
	if u.GetName() != name || u.GetNamespace() != "metallb-system" {
		t.Errorf("rendered %s/%s, want metallb-system/%s", u.GetNamespace(), u.GetName(), name)
	}
	wantLabels := map[string]string{"app.kubernetes.io/managed-by": "metallb-iad", localv1alpha1.LabelClass: "public"}
	if !reflect.DeepEqual(u.GetLabels(), wantLabels) {
		t.Errorf("labels = %v, want %v", u.GetLabels(), wantLabels)
	}
	if len(u.GetOwnerReferences()) > 0 {
		t.Errorf("owner references are the caller's, got %v", u.GetOwnerReferences())
	}
	// DeepCopy panics on values that are not plain JSON (int32, []string...).
	if !reflect.DeepEqual(u.DeepCopy(), u) {
		t.Errorf("DeepCopy changed the object")
	}
}

func TestAdvertisement(t *testing.T) {
	pools := []any{"iad-public"}
	tests := []struct {
		name   string
		params string
		kind   string
		spec   map[string]any
	}{{
		name:   "no advertisement is L2",
		params: `{"addresses":["10.0.0.0/24"]}`,
		kind:   "L2Advertisement",
		spec:   map[string]any{"ipAddressPools": pools},
	}, {
		name:   "empty advertisement is L2",
		params: `{"addresses":["10.0.0.0/24"],"advertisement":{}}`,
		kind:   "L2Advertisement",
		spec:   map[string]any{"ipAddressPools": pools},
	}, {
		name:   "empty l2",
		params: `{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{}}}`,
		kind:   "L2Advertisement",
		spec:   map[string]any{"ipAddressPools": pools},
	}, {
		name: "l2 with options",
		params: `{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"interfaces":["eth0"],
			"nodeSelectors":[{"matchLabels":{"edge":"true"}},{}]}}}`,
		kind: "L2Advertisement",
		spec: map[string]any{
			"ipAddressPools": pools,
			"interfaces":     []any{"eth0"},
			"nodeSelectors":  []any{map[string]any{"matchLabels": map[string]any{"edge": "true"}}, map[string]any{}},
		},
	}, {
		name:   "empty bgp",
		params: `{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{}}}`,
		kind:   "BGPAdvertisement",
		spec:   map[string]any{"ipAddressPools": pools},
	}, {
		name: "bgp with every option",
		params: `{"addresses":["10.0.0.0/24","2001:db8::/120"],"advertisement":{"bgp":{
			"aggregationLength":24,"aggregationLengthV6":120,"localPref":100,
			"communities":["65535:65282","large:1:2:3","my-alias"],"peers":["peer-a"],
			"nodeSelectors":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]},{"key":"spine","operator":"Exists"}]}]}}}`,
		kind: "BGPAdvertisement",
		spec: map[string]any{
			"ipAddressPools":      pools,
			"aggregationLength":   int64(24),
			"aggregationLengthV6": int64(120),
			"localPref":           int64(100),
			"communities":         []any{"65535:65282", "large:1:2:3", "my-alias"},
			"peers":               []any{"peer-a"},
			"nodeSelectors": []any{map[string]any{"matchExpressions": []any{
				map[string]any{"key": "zone", "operator": "In", "values": []any{"a"}},
				map[string]any{"key": "spine", "operator": "Exists"},
			}}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Advertisement("public", "metallb-system", decode(t, tt.params))
			checkMeta(t, u, tt.kind, "iad-public")
			if !reflect.DeepEqual(u.Object["spec"], tt.spec) {
				t.Fatalf("spec = %#v\nwant %#v", u.Object["spec"], tt.spec)
			}
		})
	}
}

func TestOutside(t *testing.T) {
	p := decode(t, `{"addresses":["10.0.0.0/25","2001:db8::/120"]}`)
	tests := []struct {
		name string
		in   []netip.Addr
		want []netip.Addr
	}{
		{"none", nil, nil},
		{"all inside", addrs("10.0.0.0", "10.0.0.127", "2001:db8::ff"), nil},
		{"sorted, IPv4 first, no repeats",
			addrs("2001:db8::100", "10.0.0.128", "fe80::1%eth0", "10.0.0.128", "9.255.255.255"),
			addrs("9.255.255.255", "10.0.0.128", "2001:db8::100", "fe80::1")},
		{"IPv4-mapped is not IPv4", addrs("::ffff:10.0.0.1"), addrs("::ffff:10.0.0.1")},
		{"invalid addresses are ignored", []netip.Addr{{}}, nil},
	}
	for _, tt := range tests {
		if got := Outside(p, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Outside(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestAggregationConflicts(t *testing.T) {
	tests := []struct {
		name   string
		params string
		keep   []netip.Addr
		want   []string
	}{
		{"L2 never conflicts", `{"addresses":["10.0.0.0/24"]}`, addrs("10.0.1.1"), nil},
		{"default aggregation never conflicts", `{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{}}}`, addrs("10.0.1.1", "2001:db8::1"), nil},
		{"inside addresses never conflict", `{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"aggregationLength":24}}}`, addrs("10.0.0.1"), nil},
		{"outside addresses under a shortened length",
			`{"addresses":["10.0.0.0/24","2001:db8::/120"],"advertisement":{"bgp":{"aggregationLength":24,"aggregationLengthV6":128}}}`,
			addrs("10.0.1.1", "2001:db8::1:1", "10.0.0.9"),
			[]string{"bound address 10.0.1.1 is outside the class's addresses, and aggregationLength 24 cannot aggregate its /32"}},
		{"IPv6 too",
			`{"addresses":["2001:db8::/120"],"advertisement":{"bgp":{"aggregationLengthV6":120}}}`,
			addrs("2001:db8::1:1"),
			[]string{"bound address 2001:db8::1:1 is outside the class's addresses, and aggregationLengthV6 120 cannot aggregate its /128"}},
	}
	for _, tt := range tests {
		if got := AggregationConflicts(decode(t, tt.params), tt.keep); !slices.Equal(got, tt.want) {
			t.Errorf("%s: AggregationConflicts = %q, want %q", tt.name, got, tt.want)
		}
	}
}
