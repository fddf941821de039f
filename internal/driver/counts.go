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

package driver

import (
	"math"

	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Counts are numbers of addresses per family, each saturating at
// math.MaxInt64 as ipaddr.Range.Size does.
type Counts struct{ IPv4, IPv6 int64 }

// CountRanges sums size over ranges by family, for RenderResult.Capacity;
// size is ipaddr.Range.Size where the backend hands out every address of a
// range.
func CountRanges(ranges []ipaddr.Range, size func(ipaddr.Range) int64) Counts {
	var c Counts
	for _, r := range ranges {
		if r.Is4() {
			c.IPv4 = addSaturating(c.IPv4, size(r))
		} else {
			c.IPv6 = addSaturating(c.IPv6, size(r))
		}
	}
	return c
}

// Total is the sum over the families.
func (c Counts) Total() int64 { return addSaturating(c.IPv4, c.IPv6) }

// addSaturating adds two counts, neither negative.
func addSaturating(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
