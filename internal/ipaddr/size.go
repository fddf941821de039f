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

// Size is the number of addresses in the range. It is a float64 so that
// IPv6 ranges fit; it is exact for IPv4 and for IPv6 up to 2^53.
func (r Range) Size() float64 {
	// Add one after converting: ::/0 holds 2^128 addresses, one more than uint128 can.
	return toUint128(r.Last).sub(toUint128(r.First)).float() + 1
}

// UsableSize is the number of addresses MetalLB may hand out from the range.
// With avoidBuggyIPs MetalLB skips IPv4 addresses ending in .0 or .255,
// which some old client stacks mistake for network or broadcast addresses
// even inside a larger prefix; IPv6 is unaffected.
func (r Range) UsableSize(avoidBuggyIPs bool) float64 {
	size := r.Size()
	if !avoidBuggyIPs || !r.Is4() {
		return size
	}
	first, last := int64(toUint128(r.First).lo), int64(toUint128(r.Last).lo)
	buggy := endingIn(0, last) - endingIn(0, first-1) + endingIn(255, last) - endingIn(255, first-1)
	return size - float64(buggy)
}

// endingIn counts the IPv4 addresses in [0, n] whose last octet is octet.
func endingIn(octet, n int64) int64 {
	if n < octet {
		return 0
	}
	return (n-octet)/256 + 1
}
