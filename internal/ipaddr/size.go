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

import "math"

// Size is the number of addresses in the range, or math.MaxInt64 when it
// holds more (an IPv6 range wider than 2^63 addresses): exact wherever an
// int64 can say it, and saturating beyond, so that a count of addresses
// fits an API field.
func (r Range) Size() int64 {
	span := toUint128(r.Last).sub(toUint128(r.First))
	if span.hi != 0 || span.lo >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(span.lo) + 1
}

// UsableSize is the number of addresses MetalLB may hand out from the range,
// saturating as Size does. With avoidBuggyIPs MetalLB skips IPv4 addresses
// ending in .0 or .255, which some old client stacks mistake for network or
// broadcast addresses even inside a larger prefix; IPv6 is unaffected.
func (r Range) UsableSize(avoidBuggyIPs bool) int64 {
	size := r.Size()
	if !avoidBuggyIPs || !r.Is4() {
		return size
	}
	first, last := int64(toUint128(r.First).lo), int64(toUint128(r.Last).lo)
	buggy := endingIn(0, last) - endingIn(0, first-1) + endingIn(255, last) - endingIn(255, first-1)
	return size - buggy
}

// endingIn counts the IPv4 addresses in [0, n] whose last octet is octet.
func endingIn(octet, n int64) int64 {
	if n < octet {
		return 0
	}
	return (n-octet)/256 + 1
}
