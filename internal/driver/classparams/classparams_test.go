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

package classparams

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

type shape struct {
	Addresses []string `json:"addresses"`
	Enabled   bool     `json:"enabled,omitempty"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		raw      *runtime.RawExtension
		problems []string
		typed    bool
	}{
		{"absent", nil, []string{AddressesRequired}, false},
		{"null", &runtime.RawExtension{Raw: []byte(" null ")}, []string{AddressesRequired}, false},
		{"good", &runtime.RawExtension{Raw: []byte(`{"addresses":["198.51.100.0/28"]}`)}, nil, true},
		{"unknown fields, in document order", &runtime.RawExtension{Raw: []byte(`{"b":1,"addresses":[],"a":2}`)},
			[]string{"parameters.b: unknown field", "parameters.a: unknown field"}, true},
		{"the first wrong type, which hides unknown fields", &runtime.RawExtension{Raw: []byte(`{"x":1,"enabled":"yes","addresses":5}`)},
			[]string{"parameters.enabled: want true or false, got a string"}, false},
		{"an element of the wrong type", &runtime.RawExtension{Raw: []byte(`{"addresses":["198.51.100.0/28",-1.5]}`)},
			[]string{"parameters.addresses: want a string, got a number"}, false},
		{"not an object", &runtime.RawExtension{Raw: []byte(`[]`)}, []string{"parameters: want an object, got an array"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, typed := Decode(tc.raw, &shape{})
			if !reflect.DeepEqual(problems, tc.problems) || typed != tc.typed {
				t.Errorf("Decode = %q, %v; want %q, %v", problems, typed, tc.problems, tc.typed)
			}
		})
	}
}

func TestAddresses(t *testing.T) {
	ranges, problems := Addresses([]string{"198.51.100.0/28", "198.51.100.7", "2001:db8::/120"})
	want := []string{`parameters.addresses[1]: "198.51.100.7" is neither a CIDR nor an a.b.c.d-e.f.g.h range; for the single address write 198.51.100.7/32`}
	if !reflect.DeepEqual(problems, want) || len(ranges) != 2 {
		t.Errorf("Addresses = %v, %q; want two ranges and %q", ranges, problems, want)
	}
	if _, problems := Addresses(nil); !reflect.DeepEqual(problems, []string{AddressesRequired}) {
		t.Errorf("Addresses(nil) problems = %q, want %q", problems, AddressesRequired)
	}
}
