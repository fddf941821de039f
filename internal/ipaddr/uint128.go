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
	"cmp"
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// uint128 is an address as a number within its family: IPv4 addresses use
// the low 32 bits only, so arithmetic never leaks into the IPv4-mapped space.
type uint128 struct{ hi, lo uint64 }

func toUint128(a netip.Addr) uint128 {
	if a.Is4() {
		b := a.As4()
		return uint128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
	}
	b := a.As16()
	return uint128{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:])}
}

func (u uint128) addr(is4 bool) netip.Addr {
	if is4 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(u.lo))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], u.hi)
	binary.BigEndian.PutUint64(b[8:], u.lo)
	return netip.AddrFrom16(b)
}

// lowBits has the n lowest bits set, 0 <= n <= 128.
func lowBits(n int) uint128 {
	if n >= 64 {
		return uint128{hi: 1<<(n-64) - 1, lo: ^uint64(0)}
	}
	return uint128{lo: 1<<n - 1}
}

func (u uint128) or(v uint128) uint128 { return uint128{u.hi | v.hi, u.lo | v.lo} }

func (u uint128) sub(v uint128) uint128 {
	lo := u.lo - v.lo
	borrow := uint64(0)
	if lo > u.lo {
		borrow = 1
	}
	return uint128{hi: u.hi - v.hi - borrow, lo: lo}
}

func (u uint128) add1() uint128 {
	if u.lo == ^uint64(0) {
		return uint128{hi: u.hi + 1}
	}
	return uint128{hi: u.hi, lo: u.lo + 1}
}

// lastOf is the highest address of p.
func lastOf(p netip.Prefix) netip.Addr {
	p = p.Masked()
	return toUint128(p.Addr()).or(lowBits(p.Addr().BitLen() - p.Bits())).addr(p.Addr().Is4())
}

func (u uint128) and(v uint128) uint128 { return uint128{u.hi & v.hi, u.lo & v.lo} }

func (u uint128) isZero() bool { return u.hi == 0 && u.lo == 0 }

func (u uint128) cmp(v uint128) int {
	switch {
	case u.hi != v.hi:
		return cmp.Compare(u.hi, v.hi)
	default:
		return cmp.Compare(u.lo, v.lo)
	}
}

// bitLen is the number of bits needed to write u.
func (u uint128) bitLen() int {
	if u.hi != 0 {
		return 64 + bits.Len64(u.hi)
	}
	return bits.Len64(u.lo)
}

// trailingZeros is capped at 128 for zero.
func (u uint128) trailingZeros() int {
	if u.lo != 0 {
		return bits.TrailingZeros64(u.lo)
	}
	return 64 + bits.TrailingZeros64(u.hi)
}
