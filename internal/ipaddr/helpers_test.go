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
	"math/rand/v2"
	"net/netip"
	"testing"
)

// newRand is seeded per test so that a failure reproduces.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(uint64(len(t.Name())), 42))
}

func mustRange(t *testing.T, s string) Range {
	t.Helper()
	r, err := ParseRange(s)
	if err != nil {
		t.Fatalf("ParseRange(%q): %v", s, err)
	}
	return r
}

// randomRange draws ranges of every scale, from one address to a whole
// family, a third of them exact prefixes, so that properties are exercised
// across octet and group boundaries and on both String forms.
func randomRange(rng *rand.Rand, is4 bool) Range {
	bitLen := 128
	if is4 {
		bitLen = 32
	}
	first := randomBits(rng, bitLen)
	if rng.IntN(3) == 0 {
		p := netip.PrefixFrom(first.addr(is4), rng.IntN(bitLen+1)).Masked()
		return Range{First: p.Addr(), Last: lastOf(p)}
	}
	span := randomBits(rng, rng.IntN(bitLen+1))
	return Range{First: first.addr(is4), Last: addSat(first, span, lowBits(bitLen)).addr(is4)}
}

func randomBits(rng *rand.Rand, n int) uint128 {
	return uint128{hi: rng.Uint64(), lo: rng.Uint64()}.and(lowBits(n))
}

// addSat is a+b, or limit when that would pass it.
func addSat(a, b, limit uint128) uint128 {
	lo := a.lo + b.lo
	carry := uint64(0)
	if lo < a.lo {
		carry = 1
	}
	sum := uint128{hi: a.hi + b.hi + carry, lo: lo}
	if sum.cmp(a) < 0 || sum.cmp(limit) > 0 {
		return limit
	}
	return sum
}
