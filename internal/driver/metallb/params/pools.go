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

package params

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/address-controller/internal/ipaddr"
)

// PoolRanges reads the spec.addresses of any MetalLB IPAddressPool, ours or
// not, the way MetalLB reads them (a CIDR's host bits are ignored). Entries
// it cannot read are named in the error; the ranges it could read are
// returned all the same, so that an overlap check can still use them.
func PoolRanges(pool *unstructured.Unstructured) ([]ipaddr.Range, error) {
	addresses, _, err := unstructured.NestedStringSlice(pool.Object, "spec", "addresses")
	if err != nil {
		return nil, fmt.Errorf("IPAddressPool %s: spec.addresses: %w", poolKey(pool), err)
	}
	var ranges []ipaddr.Range
	var problems []string
	for i, s := range addresses {
		r, err := ipaddr.ParseRangeLenient(s)
		if err != nil {
			problems = append(problems, fmt.Sprintf("spec.addresses[%d]: %v", i, err))
			continue
		}
		ranges = append(ranges, r)
	}
	if len(problems) > 0 {
		return ranges, fmt.Errorf("IPAddressPool %s: %s", poolKey(pool), strings.Join(problems, "; "))
	}
	return ranges, nil
}

func poolKey(pool *unstructured.Unstructured) string {
	if pool.GetNamespace() == "" {
		return pool.GetName()
	}
	return pool.GetNamespace() + "/" + pool.GetName()
}

// Overlaps describes each pair of an entry of ours and one of theirs that
// share an address, as "198.51.100.0/24 overlaps 198.51.100.128-198.51.100.200".
// MetalLB refuses its whole configuration over any such pair, so a class
// with one must not be rendered. Empty when there is none.
func Overlaps(ours, theirs []ipaddr.Range) []string {
	var out []string
	for _, o := range ours {
		for _, t := range theirs {
			if o.Overlaps(t) {
				out = append(out, o.String()+" overlaps "+t.String())
			}
		}
	}
	return out
}
