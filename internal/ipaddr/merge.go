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
)

// Compare orders ranges IPv4 first, then by first and last address. It
// suits slices.SortFunc.
func Compare(a, b Range) int {
	if c := a.First.Compare(b.First); c != 0 {
		return c
	}
	return a.Last.Compare(b.Last)
}

// Merge returns the same addresses as rs in the fewest ranges: sorted, with
// overlapping and adjacent ranges of a family joined. rs is not modified.
func Merge(rs []Range) []Range {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, Compare)
	var out []Range
	for _, r := range sorted {
		if n := len(out); n > 0 && joins(out[n-1], r) {
			if out[n-1].Last.Less(r.Last) {
				out[n-1].Last = r.Last
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// joins reports whether b, sorted after a, overlaps or directly follows a.
func joins(a, b Range) bool {
	return a.Overlaps(b) || (a.First.BitLen() == b.First.BitLen() && a.Last.Next() == b.First)
}
