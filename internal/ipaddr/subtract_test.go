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

func TestSubtract(t *testing.T) {
	tests := []struct {
		name      string
		in, cut   []string
		want      []string
		wantEmpty bool
	}{
		{name: "nothing cut", in: []string{"10.0.0.0/24"}, want: []string{"10.0.0.0/24"}},
		{name: "all cut", in: []string{"10.0.0.0/24"}, cut: []string{"10.0.0.0/16"}, wantEmpty: true},
		{name: "head cut", in: []string{"10.0.0.0/24"}, cut: []string{"10.0.0.0/25"}, want: []string{"10.0.0.128/25"}},
		{name: "middle cut", in: []string{"10.0.0.0/24"}, cut: []string{"10.0.0.10-10.0.0.20"},
			want: []string{"10.0.0.0-10.0.0.9", "10.0.0.21-10.0.0.255"}},
		{name: "several cuts and ranges", in: []string{"10.0.1.0/24", "10.0.0.0/24", "fd00::/120"},
			cut:  []string{"10.0.0.0/24", "10.0.1.255/32", "fd00::/121"},
			want: []string{"10.0.1.0-10.0.1.254", "fd00::80/121"}},
		{name: "other family untouched", in: []string{"10.0.0.0/30"}, cut: []string{"::/0"}, want: []string{"10.0.0.0/30"}},
		{name: "ends of the family", in: []string{"0.0.0.0/0"}, cut: []string{"0.0.0.0/32", "255.255.255.255/32"},
			want: []string{"0.0.0.1-255.255.255.254"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in, cut []Range
			for _, s := range tt.in {
				in = append(in, mustRange(t, s))
			}
			for _, s := range tt.cut {
				cut = append(cut, mustRange(t, s))
			}
			orig := slices.Clone(in)
			got := make([]string, 0, len(tt.want))
			for _, r := range Subtract(in, cut) {
				got = append(got, r.String())
			}
			if tt.wantEmpty != (len(got) == 0) || !tt.wantEmpty && !slices.Equal(got, tt.want) {
				t.Fatalf("Subtract(%v, %v) = %v, want %v", tt.in, tt.cut, got, tt.want)
			}
			if !slices.Equal(in, orig) {
				t.Fatal("Subtract modified its input")
			}
		})
	}
}
