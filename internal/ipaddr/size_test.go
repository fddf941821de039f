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
	"math"
	"testing"
)

func TestSize(t *testing.T) {
	tests := []struct {
		r            string
		size, usable int64
	}{
		{"10.0.0.0/23", 512, 508},
		{"10.0.0.0/24", 256, 254},
		{"10.0.0.0/32", 1, 0},
		{"10.0.0.255/32", 1, 0},
		{"10.0.0.7/32", 1, 1},
		{"10.0.0.255-10.0.1.0", 2, 0},
		{"10.0.0.254-10.0.1.1", 4, 2},
		{"10.0.0.250-10.0.1.5", 12, 10},
		{"10.0.0.1-10.0.0.254", 254, 254},
		{"0.0.0.0/0", 1 << 32, 1<<32 - 2<<24},
		{"255.255.255.0/24", 256, 254},
		{"2001:db8::/120", 256, 256},
		{"2001:db8::ff-2001:db8::100", 2, 2},
		{"2001:db8::/66", 1 << 62, 1 << 62},
		{"2001:db8::-2001:db8::7fff:ffff:ffff:fffe", math.MaxInt64, math.MaxInt64},
		{"2001:db8::/65", math.MaxInt64, math.MaxInt64},
		{"2001:db8::/64", math.MaxInt64, math.MaxInt64},
		{"::/0", math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		r := mustRange(t, tt.r)
		if got := r.Size(); got != tt.size {
			t.Errorf("%s.Size() = %v, want %v", tt.r, got, tt.size)
		}
		if got := r.UsableSize(false); got != tt.size {
			t.Errorf("%s.UsableSize(false) = %v, want %v", tt.r, got, tt.size)
		}
		if got := r.UsableSize(true); got != tt.usable {
			t.Errorf("%s.UsableSize(true) = %v, want %v", tt.r, got, tt.usable)
		}
	}
}

// TestUsableSizeMatchesCounting compares the closed form against walking
// small IPv4 ranges address by address.
func TestUsableSizeMatchesCounting(t *testing.T) {
	rng := newRand(t)
	for range 2000 {
		first := uint128{lo: uint64(rng.Uint32())}
		span := uint128{lo: uint64(rng.IntN(1200))}
		r := Range{First: first.addr(true), Last: addSat(first, span, lowBits(32)).addr(true)}
		var want int64
		for a := r.First; a.IsValid() && !r.Last.Less(a); a = a.Next() {
			if last := a.As4()[3]; last != 0 && last != 255 {
				want++
			}
		}
		if got := r.UsableSize(true); got != want {
			t.Fatalf("%s.UsableSize(true) = %v, counted %v", r, got, want)
		}
	}
}
