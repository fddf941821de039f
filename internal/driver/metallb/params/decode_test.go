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
	"errors"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cozystack/address-controller/internal/ipaddr"
)

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func rng(t *testing.T, s string) ipaddr.Range {
	t.Helper()
	r, err := ipaddr.ParseRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   *runtime.RawExtension
		want Parameters
	}{{
		name: "minimal",
		in:   raw(`{"addresses":["203.0.113.0/24"]}`),
		want: Parameters{Addresses: []string{"203.0.113.0/24"}},
	}, {
		name: "both syntaxes and families, surrounding whitespace",
		in:   raw(` {"addresses":["203.0.113.0/24","198.51.100.10 - 198.51.100.20","2001:db8::/120"],"avoidBuggyIPs":true} `),
		want: Parameters{
			Addresses:     []string{"203.0.113.0/24", "198.51.100.10 - 198.51.100.20", "2001:db8::/120"},
			AvoidBuggyIPs: true,
		},
	}, {
		name: "empty advertisement means L2",
		in:   raw(`{"addresses":["10.0.0.0/24"],"advertisement":{}}`),
		want: Parameters{Addresses: []string{"10.0.0.0/24"}, Advertisement: &AdvertisementOptions{}},
	}, {
		name: "l2 options",
		in: raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"interfaces":["eth0","bond0.100"],
			"nodeSelectors":[{"matchLabels":{"node-role.kubernetes.io/edge":""}}]}}}`),
		want: Parameters{Addresses: []string{"10.0.0.0/24"}, Advertisement: &AdvertisementOptions{L2: &L2Options{
			Interfaces:    []string{"eth0", "bond0.100"},
			NodeSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"node-role.kubernetes.io/edge": ""}}},
		}}},
	}, {
		name: "bgp options",
		in: raw(`{"addresses":["10.0.0.0/24","2001:db8::/120"],"advertisement":{"bgp":{
			"aggregationLength":24,"aggregationLengthV6":120,"localPref":4294967295,
			"communities":["65535:65282","large:1:2:4294967295","my-alias"],"peers":["peer-a","rack1.peer-b"],
			"nodeSelectors":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}}}`),
		want: Parameters{Addresses: []string{"10.0.0.0/24", "2001:db8::/120"}, Advertisement: &AdvertisementOptions{BGP: &BGPOptions{
			AggregationLength:   new(int32(24)),
			AggregationLengthV6: new(int32(120)),
			LocalPref:           new(uint32(4294967295)),
			Communities:         []string{"65535:65282", "large:1:2:4294967295", "my-alias"},
			Peers:               []string{"peer-a", "rack1.peer-b"},
			NodeSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
			}}},
		}}},
	}, {
		name: "aggregation as wide as a range's widest prefix",
		in:   raw(`{"addresses":["10.0.0.0-10.0.0.5"],"advertisement":{"bgp":{"aggregationLength":30}}}`),
		want: Parameters{Addresses: []string{"10.0.0.0-10.0.0.5"}, Advertisement: &AdvertisementOptions{BGP: &BGPOptions{
			AggregationLength: new(int32(30)),
		}}},
	}, {
		name: "decoded object rather than raw bytes",
		in: &runtime.RawExtension{Object: &unstructured.Unstructured{Object: map[string]any{
			"addresses": []any{"10.0.0.0/24"},
		}}},
		want: Parameters{Addresses: []string{"10.0.0.0/24"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.in)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			for _, s := range tt.want.Addresses {
				tt.want.Ranges = append(tt.want.Ranges, rng(t, s))
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("Decode =\n %+v\nwant\n %+v", *got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   *runtime.RawExtension
		want string
	}{
		{"nil", nil, "parameters.addresses is required"},
		{"empty", raw(""), "parameters.addresses is required"},
		{"null", raw("null"), "parameters.addresses is required"},
		{"empty object", raw("{}"), "parameters.addresses is required"},
		{"empty list", raw(`{"addresses":[]}`), "parameters.addresses is required"},
		{"misspelt", raw(`{"adresses":["10.0.0.0/24"]}`),
			"parameters.adresses: unknown field; parameters.addresses is required"},
		{"wrong case", raw(`{"Addresses":["10.0.0.0/24"]}`),
			"parameters.Addresses: unknown field; parameters.addresses is required"},
		{"unknown deep inside", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"nodeSelectors":[{},{"matchLabel":{"a":"b"}}]},"bgpp":{}}}`),
			"parameters.advertisement.l2.nodeSelectors[1].matchLabel: unknown field; parameters.advertisement.bgpp: unknown field"},
		{"duplicate field", raw(`{"addresses":["10.0.0.0/24"],"addresses":["10.0.1.0/24"]}`),
			"parameters.addresses: duplicate field"},
		{"brief example", raw(`{"addresses":["10.0.0.0/24","10.0.0.300/24"],"advertisement":{"l2":{},"bgp":{}}}`),
			`parameters.addresses[1]: "10.0.0.300/24" is neither a CIDR nor an a.b.c.d-e.f.g.h range: "10.0.0.300" is not an IP address; ` +
				"parameters.advertisement: set exactly one of l2 or bgp"},
		{"not an object", raw(`"10.0.0.0/24"`), "parameters: want an object, got a string"},
		{"a list", raw(`["10.0.0.0/24"]`), "parameters: want an object, got an array"},
		{"addresses not a list", raw(`{"addresses":"10.0.0.0/24"}`), "parameters.addresses: want a list, got a string"},
		{"avoidBuggyIPs not a bool", raw(`{"addresses":["10.0.0.0/24"],"avoidBuggyIPs":"yes"}`),
			"parameters.avoidBuggyIPs: want true or false, got a string"},
		{"negative localPref", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"localPref":-1}}}`),
			"parameters.advertisement.bgp.localPref: want an integer from 0 to 4294967295, got -1"},
		{"huge aggregationLength", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"aggregationLength":1e10}}}`),
			"parameters.advertisement.bgp.aggregationLength: want an integer from -2147483648 to 2147483647, got 1e10"},
		{"peer not a string", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"peers":[true]}}}`),
			"parameters.advertisement.bgp.peers: want a string, got a boolean"},
		{"matchLabels not an object", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"nodeSelectors":[{"matchLabels":["a"]}]}}}`),
			"parameters.advertisement.l2.nodeSelectors.matchLabels: want an object, got an array"},
		{"selector value not a string", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"nodeSelectors":[{"matchExpressions":[{"key":"a","operator":"In","values":[1]}]}]}}}`),
			"parameters.advertisement.l2.nodeSelectors.matchExpressions.values: want a string, got a number"},
		{"trailing data", raw(`{"addresses":["10.0.0.0/24"]} {}`),
			"parameters: not valid JSON: invalid character '{' after top-level value"},
		{"truncated", raw(`{"addresses":["10.0.0.0/24"]`), "parameters: not valid JSON: unexpected end of JSON input"},
		{"host bits", raw(`{"addresses":["203.0.113.7/24"]}`),
			`parameters.addresses[0]: "203.0.113.7/24" has host bits set; did you mean 203.0.113.0/24?`},
		{"overlaps and repeats", raw(`{"addresses":["10.0.0.0/24","2001:db8::/120","10.0.0.128/25","10.0.0.0-10.0.0.255","2001:db8::ff-2001:db8::1:0"]}`),
			`parameters.addresses[2]: "10.0.0.128/25" overlaps parameters.addresses[0] ("10.0.0.0/24"); ` +
				`parameters.addresses[3]: "10.0.0.0-10.0.0.255" repeats parameters.addresses[0] ("10.0.0.0/24"); ` +
				`parameters.addresses[3]: "10.0.0.0-10.0.0.255" overlaps parameters.addresses[2] ("10.0.0.128/25"); ` +
				`parameters.addresses[4]: "2001:db8::ff-2001:db8::1:0" overlaps parameters.addresses[1] ("2001:db8::/120")`},
		{"adjacent is fine, bad entries are not compared", raw(`{"addresses":["10.0.0.0/25","10.0.0.128/25","bogus"]}`),
			`parameters.addresses[2]: "bogus" is neither a CIDR nor an a.b.c.d-e.f.g.h range`},
		{"aggregation bounds", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"aggregationLength":0,"aggregationLengthV6":129}}}`),
			"parameters.advertisement.bgp.aggregationLength: 0 is out of range; want 1 to 32; " +
				"parameters.advertisement.bgp.aggregationLengthV6: 129 is out of range; want 0 to 128"},
		{"aggregation bounds, high and low", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"aggregationLength":33,"aggregationLengthV6":-1}}}`),
			"parameters.advertisement.bgp.aggregationLength: 33 is out of range; want 1 to 32; " +
				"parameters.advertisement.bgp.aggregationLengthV6: -1 is out of range; want 0 to 128"},
		{"aggregation wider than the ranges", raw(`{"addresses":["10.0.0.0/28","10.0.1.1-10.0.1.6","10.1.0.0/16","2001:db8::/120"],
			"advertisement":{"bgp":{"aggregationLength":24,"aggregationLengthV6":112}}}`),
			`parameters.advertisement.bgp.aggregationLength: 24 is shorter than /28, the widest prefix of parameters.addresses[0] ("10.0.0.0/28"); MetalLB would refuse it; ` +
				`parameters.advertisement.bgp.aggregationLength: 24 is shorter than /31, the widest prefix of parameters.addresses[1] ("10.0.1.1-10.0.1.6"); MetalLB would refuse it; ` +
				`parameters.advertisement.bgp.aggregationLengthV6: 112 is shorter than /120, the widest prefix of parameters.addresses[3] ("2001:db8::/120"); MetalLB would refuse it`},
		{"communities", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"communities":
			["1:2","65536:1","1:2:3","large:1:2","large:4294967296:1:1","65535","My_Alias","","large:a:b:c","-1:2"]}}}`),
			`parameters.advertisement.bgp.communities[1]: "65536:1" is not a community; want a:b, each from 0 to 65535; ` +
				`parameters.advertisement.bgp.communities[2]: "1:2:3" is not a community; want a:b, each from 0 to 65535; ` +
				`parameters.advertisement.bgp.communities[3]: "large:1:2" is not a large community; want large:a:b:c, each from 0 to 4294967295; ` +
				`parameters.advertisement.bgp.communities[4]: "large:4294967296:1:1" is not a large community; want large:a:b:c, each from 0 to 4294967295; ` +
				`parameters.advertisement.bgp.communities[5]: "65535" is a bare number; write a community as a:b or large:a:b:c; ` +
				`parameters.advertisement.bgp.communities[6]: "My_Alias" is neither a community (a:b, large:a:b:c) nor a Community alias name: ` +
				`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'); ` +
				`parameters.advertisement.bgp.communities[7]: "" is neither a community (a:b, large:a:b:c) nor a Community alias name: ` +
				`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'); ` +
				`parameters.advertisement.bgp.communities[8]: "large:a:b:c" is not a large community; want large:a:b:c, each from 0 to 4294967295; ` +
				`parameters.advertisement.bgp.communities[9]: "-1:2" is not a community; want a:b, each from 0 to 65535`},
		{"peers", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"peers":["ok","Peer_A"]}}}`),
			`parameters.advertisement.bgp.peers[1]: "Peer_A" is not a BGPPeer name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"selectors", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"bgp":{"nodeSelectors":[
			{"matchLabels":{"ok":"yes"}},{"matchExpressions":[{"key":"zone","operator":"Near"}]},{"matchLabels":{"bad key!":"x"}}]}}}`),
			`parameters.advertisement.bgp.nodeSelectors[1]: "Near" is not a valid label selector operator; ` +
				`parameters.advertisement.bgp.nodeSelectors[2]: key: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"interfaces", raw(`{"addresses":["10.0.0.0/24"],"advertisement":{"l2":{"interfaces":["eth0","","eth0/1","a-very-long-interface"]}}}`),
			`parameters.advertisement.l2.interfaces[1]: "" is not a network interface name; ` +
				`parameters.advertisement.l2.interfaces[2]: "eth0/1" is not a network interface name; ` +
				`parameters.advertisement.l2.interfaces[3]: "a-very-long-interface" is not a network interface name`},
		{"everything at once", raw(`{"adresses":1,"addresses":["10.0.0.0/33"],"advertisement":{"l2":{"interfaces":[""]},"bgp":{"peers":["-"]}}}`),
			`parameters.adresses: unknown field; ` +
				`parameters.addresses[0]: "10.0.0.0/33" has prefix length "33"; want a number from 0 to 32; ` +
				`parameters.advertisement: set exactly one of l2 or bgp; ` +
				`parameters.advertisement.l2.interfaces[0]: "" is not a network interface name; ` +
				`parameters.advertisement.bgp.peers[0]: "-" is not a BGPPeer name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.in)
			if err == nil {
				t.Fatalf("Decode = %+v, want error %q", got, tt.want)
			}
			if got != nil {
				t.Errorf("Decode returned parameters alongside an error")
			}
			if err.Error() != tt.want {
				t.Fatalf("Decode error\n got: %s\nwant: %s", err, tt.want)
			}
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("error %T does not expose its problems", err)
			}
		})
	}
}

func TestErrorListsProblems(t *testing.T) {
	_, err := Decode(raw(`{"addresses":["x","y"]}`))
	var perr *Error
	if !errors.As(err, &perr) || len(perr.Problems) != 2 {
		t.Fatalf("Decode error = %#v, want two problems", err)
	}
}
