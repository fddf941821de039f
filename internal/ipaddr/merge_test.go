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
	"slices"
	"testing"
)

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", nil, nil},
		{"one", []string{"10.0.0.0/24"}, []string{"10.0.0.0/24"}},
		{"sorted, families apart", []string{"2001:db8::/120", "10.0.1.0/24", "10.0.0.7/32"},
			[]string{"10.0.0.7/32", "10.0.1.0/24", "2001:db8::/120"}},
		{"adjacent halves join", []string{"10.0.0.128/25", "10.0.0.0/25"}, []string{"10.0.0.0/24"}},
		{"overlap joins", []string{"10.0.0.0/24", "10.0.0.200-10.0.1.10"}, []string{"10.0.0.0-10.0.1.10"}},
		{"contained vanishes", []string{"10.0.0.0/16", "10.0.3.0/24"}, []string{"10.0.0.0/16"}},
		{"gap kept", []string{"10.0.0.0-10.0.0.9", "10.0.0.11-10.0.0.20"}, []string{"10.0.0.0-10.0.0.9", "10.0.0.11-10.0.0.20"}},
		{"duplicates", []string{"10.0.0.1/32", "10.0.0.1/32"}, []string{"10.0.0.1/32"}},
		{"ends of the family", []string{"255.255.255.255/32", "255.255.255.254/32", "::/1", "8000::/1"},
			[]string{"255.255.255.254/31", "::/0"}},
		{"IPv4 never joins IPv6", []string{"255.255.255.255/32", "::/128"}, []string{"255.255.255.255/32", "::/128"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []Range
			for _, s := range tt.in {
				in = append(in, mustRange(t, s))
			}
			orig := slices.Clone(in)
			merged := Merge(in)
			got := make([]string, 0, len(merged))
			for _, r := range merged {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Merge(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !slices.Equal(in, orig) {
				t.Fatal("Merge modified its input")
			}
		})
	}
}
