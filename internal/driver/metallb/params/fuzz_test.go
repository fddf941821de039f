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
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzDecode feeds Decode arbitrary bytes as a class's spec.parameters: the
// plain test run replays the seeds here and in testdata/fuzz, make test
// fuzzes it for a few seconds and make fuzz for longer. No input may panic;
// every refusal lists its problems, each naming the field it is about;
// everything accepted renders, and decodes again from its own encoding to
// the same ranges.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"addresses": ["203.0.113.0/24", "198.51.100.10-198.51.100.20", "2001:db8::/120"], "avoidBuggyIPs": true}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"l2": {"interfaces": ["eth0"], "nodeSelectors": [{"matchLabels": {"a": "b"}}]}}}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"bgp": {"aggregationLength": 28, "aggregationLengthV6": 124, "localPref": 100, "communities": ["65000:1", "large:1:2:3", "no-export"], "peers": ["peer-a"]}}}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"l2": {}, "bgp": {}}}`,
		`{"addresses": ["10.0.0.0/28", "10.0.0.8/29"]}`,
		`{"addresses": ["10.0.0.0/28"], "adresses": []}`,
		`{"addresses": ["10.0.0.0/28"], "addresses": ["10.0.1.0/28"]}`,
		`{"addresses": "10.0.0.0/28"}`,
		`{"addresses": [1, 2]}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"bgp": {"aggregationLength": 99999999999}}}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"bgp": {"localPref": -1, "communities": ["70000:1", "12"]}}}`,
		`{"addresses": ["10.0.0.0/28"], "advertisement": {"l2": {"nodeSelectors": [{"matchExpressions": [{"key": "a", "operator": "Bogus"}]}]}}}`,
		`{"addresses": []}`, `{}`, `null`, `[]`, `"x"`, `{"addresses": ["10.0.0.0/28"]} trailing`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(&runtime.RawExtension{Raw: data})
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("Decode(%q): %v is not a list of problems", data, err)
			}
			for _, problem := range perr.Problems {
				if !strings.HasPrefix(problem, "parameters") || len(strings.TrimSpace(problem)) <= len("parameters: ") {
					t.Fatalf("Decode(%q): problem %q does not name a field and say what is wrong", data, problem)
				}
			}
			return
		}
		if len(p.Addresses) == 0 || len(p.Ranges) != len(p.Addresses) {
			t.Fatalf("Decode(%q) accepted %d addresses with %d ranges", data, len(p.Addresses), len(p.Ranges))
		}
		for i, r := range p.Ranges {
			if !r.First.IsValid() || r.Last.Less(r.First) {
				t.Fatalf("Decode(%q): range %d (%q) is %v", data, i, p.Addresses[i], r)
			}
		}
		if Pool("c", "ns", p, nil) == nil || Advertisement("c", "ns", p) == nil {
			t.Fatalf("Decode(%q) accepted parameters that render nothing", data)
		}
		encoded, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Decode(%q) accepted parameters that do not encode: %v", data, err)
		}
		again, err := Decode(&runtime.RawExtension{Raw: encoded})
		if err != nil || !reflect.DeepEqual(again.Ranges, p.Ranges) {
			t.Fatalf("Decode(%q) accepted parameters whose encoding %s decodes to %v, %v", data, encoded, again, err)
		}
	})
}
