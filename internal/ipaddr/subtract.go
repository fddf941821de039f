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

// Subtract returns the addresses of rs that lie in none of cut, in the fewest
// ranges, sorted. Neither slice is modified.
func Subtract(rs, cut []Range) []Range {
	out := Merge(rs)
	for _, c := range Merge(cut) {
		next := make([]Range, 0, len(out)+1)
		for _, r := range out {
			next = append(next, r.minus(c)...)
		}
		out = next
	}
	return out
}

// minus is r without the addresses of c: zero, one or two ranges.
func (r Range) minus(c Range) []Range {
	if !r.Overlaps(c) {
		return []Range{r}
	}
	var out []Range
	if r.First.Less(c.First) {
		out = append(out, Range{First: r.First, Last: c.First.Prev()})
	}
	if c.Last.Less(r.Last) {
		out = append(out, Range{First: c.Last.Next(), Last: r.Last})
	}
	return out
}
