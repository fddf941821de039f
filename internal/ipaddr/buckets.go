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
	"fmt"
	"net/netip"
)

// Index keys of Buckets, IndexKeys and LookupKeys.
const (
	// WideV4 and WideV6 stand for any range too wide to list its buckets.
	WideV4 = "wide-v4"
	WideV6 = "wide-v6"
	// FamilyV4 and FamilyV6 are carried by every range of the family, so that
	// a wide range can find everything it might overlap.
	FamilyV4 = "v4"
	FamilyV6 = "v6"
)

// maxBuckets bounds the keys of one range; wider ranges are "wide".
const maxBuckets = 64

// Buckets are coarse index keys that let a caller find the ranges that may
// overlap a given one through an index instead of a scan: one key per IPv4
// /8 the range touches ("v4/10"), one per IPv6 /32 ("v6/2001:db8"). A range
// that would need more than 64 keys gets the single key WideV4 or WideV6.
//
// Two overlapping ranges always share a key, or one of them is wide. So a
// caller indexes each range under IndexKeys and looks candidates up with
// LookupKeys: a range's own buckets plus its family's wide key, or, for a
// wide range, its whole family. Candidates still need Overlaps.
func (r Range) Buckets() []string {
	if r.wide() {
		if r.Is4() {
			return []string{WideV4}
		}
		return []string{WideV6}
	}
	first, last := bucket(r.First), bucket(r.Last)
	keys := make([]string, 0, last-first+1)
	for b := first; b <= last; b++ {
		if r.Is4() {
			keys = append(keys, fmt.Sprintf("v4/%d", b))
		} else {
			keys = append(keys, fmt.Sprintf("v6/%x:%x", b>>16, b&0xffff))
		}
	}
	return keys
}

// bucket is the /8 of an IPv4 address or the /32 of an IPv6 one.
func bucket(a netip.Addr) uint64 {
	if a.Is4() {
		return toUint128(a).lo >> 24
	}
	return toUint128(a).hi >> 32
}

// IndexKeys are the keys to index r under: its buckets and its family.
func (r Range) IndexKeys() []string {
	return append(r.Buckets(), r.family())
}

// LookupKeys are the keys whose ranges may overlap r: its own buckets plus
// the family's wide key, or the whole family when r is wide itself.
func (r Range) LookupKeys() []string {
	if r.wide() {
		return []string{r.family()}
	}
	keys := r.Buckets()
	if r.Is4() {
		return append(keys, WideV4)
	}
	return append(keys, WideV6)
}

func (r Range) wide() bool {
	return bucket(r.Last)-bucket(r.First) >= maxBuckets
}

func (r Range) family() string {
	if r.Is4() {
		return FamilyV4
	}
	return FamilyV6
}
