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
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/address-controller/internal/driver/classparams"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// validate checks what the JSON shape cannot, fills p.Ranges, and returns
// every problem found.
func validate(p *Parameters) []string {
	var v validator
	v.addresses(p)
	if p.Advertisement != nil {
		if p.Advertisement.L2 != nil && p.Advertisement.BGP != nil {
			v.addf("advertisement", "set exactly one of l2 or bgp")
		}
		if l2 := p.Advertisement.L2; l2 != nil {
			v.interfaces("advertisement.l2.interfaces", l2.Interfaces)
			v.selectors("advertisement.l2.nodeSelectors", l2.NodeSelectors)
		}
		if bgp := p.Advertisement.BGP; bgp != nil {
			v.bgp(bgp, p)
		}
	}
	return v.problems
}

type validator struct {
	problems []string
}

func (v *validator) addf(path, format string, args ...any) {
	v.problems = append(v.problems, classparams.Path(path)+": "+fmt.Sprintf(format, args...))
}

// addresses parses the ranges and refuses any two that overlap: MetalLB
// would refuse the pool.
func (v *validator) addresses(p *Parameters) {
	if len(p.Addresses) == 0 {
		v.problems = append(v.problems, classparams.AddressesRequired)
		return
	}
	// Ranges stays index-aligned with Addresses; a bad entry leaves a zero
	// Range, which later checks skip. Decode returns nothing on any problem,
	// so the zero Ranges never escape.
	p.Ranges = make([]ipaddr.Range, len(p.Addresses))
	for i, s := range p.Addresses {
		r, problem := classparams.Address(i, s)
		if problem != "" {
			v.problems = append(v.problems, problem)
			continue
		}
		p.Ranges[i] = r
		for j, earlier := range p.Ranges[:i] {
			if !earlier.Overlaps(r) {
				continue
			}
			relation := "overlaps"
			if earlier == r {
				relation = "repeats"
			}
			v.addf(fmt.Sprintf("addresses[%d]", i), "%q %s parameters.addresses[%d] (%q)", s, relation, j, p.Addresses[j])
		}
	}
}

// interfaces checks Linux interface names: 1 to 15 bytes, no '/' or
// whitespace.
func (v *validator) interfaces(path string, names []string) {
	for i, name := range names {
		if name == "" || len(name) > 15 || name == "." || name == ".." || strings.ContainsAny(name, "/ \t\n:") {
			v.addf(fmt.Sprintf("%s[%d]", path, i), "%q is not a network interface name", name)
		}
	}
}

func (v *validator) selectors(path string, selectors []metav1.LabelSelector) {
	for i := range selectors {
		if _, err := metav1.LabelSelectorAsSelector(&selectors[i]); err != nil {
			v.addf(fmt.Sprintf("%s[%d]", path, i), "%v", err)
		}
	}
}

func (v *validator) bgp(bgp *BGPOptions, p *Parameters) {
	const path = "advertisement.bgp"
	if n := bgp.AggregationLength; n != nil {
		if *n < 1 || *n > 32 {
			v.addf(path+".aggregationLength", "%d is out of range; want 1 to 32", *n)
		} else {
			v.aggregation(path+".aggregationLength", int(*n), true, p)
		}
	}
	if n := bgp.AggregationLengthV6; n != nil {
		if *n < 0 || *n > 128 {
			v.addf(path+".aggregationLengthV6", "%d is out of range; want 0 to 128", *n)
		} else {
			v.aggregation(path+".aggregationLengthV6", int(*n), false, p)
		}
	}
	for i, c := range bgp.Communities {
		if msg := checkCommunity(c); msg != "" {
			v.addf(fmt.Sprintf("%s.communities[%d]", path, i), "%s", msg)
		}
	}
	for i, peer := range bgp.Peers {
		if errs := validation.IsDNS1123Subdomain(peer); len(errs) > 0 {
			v.addf(fmt.Sprintf("%s.peers[%d]", path, i), "%q is not a BGPPeer name: %s", peer, strings.Join(errs, ", "))
		}
	}
	v.selectors(path+".nodeSelectors", bgp.NodeSelectors)
}

// aggregation mirrors MetalLB's rule: rolling routes up to length n must
// not announce addresses outside an entry, so n may not be shorter than
// the entry's widest prefix.
func (v *validator) aggregation(path string, n int, v4 bool, p *Parameters) {
	for i, r := range p.Ranges {
		if !r.First.IsValid() || r.Is4() != v4 {
			continue
		}
		if widest := widestPrefix(r); n < widest {
			v.addf(path, "%d is shorter than /%d, the widest prefix of parameters.addresses[%d] (%q); MetalLB would refuse it",
				n, widest, i, p.Addresses[i])
		}
	}
}

// widestPrefix is the shortest prefix length among the CIDRs MetalLB splits
// r into.
func widestPrefix(r ipaddr.Range) int {
	widest := r.First.BitLen()
	for _, pfx := range r.Prefixes() {
		widest = min(widest, pfx.Bits())
	}
	return widest
}

// checkCommunity returns what is wrong with c, or "".
func checkCommunity(c string) string {
	if rest, ok := strings.CutPrefix(c, "large:"); ok {
		if !numbers(rest, 3, 32) {
			return fmt.Sprintf("%q is not a large community; want large:a:b:c, each from 0 to 4294967295", c)
		}
		return ""
	}
	if strings.Contains(c, ":") {
		if !numbers(c, 2, 16) {
			return fmt.Sprintf("%q is not a community; want a:b, each from 0 to 65535", c)
		}
		return ""
	}
	if _, err := strconv.ParseUint(c, 10, 64); err == nil {
		return fmt.Sprintf("%q is a bare number; write a community as a:b or large:a:b:c", c)
	}
	if errs := validation.IsDNS1123Label(c); len(errs) > 0 {
		return fmt.Sprintf("%q is neither a community (a:b, large:a:b:c) nor a Community alias name: %s", c, strings.Join(errs, ", "))
	}
	return ""
}

// numbers reports whether s is n colon-separated unsigned decimals of the
// given bit size.
func numbers(s string, n, bitSize int) bool {
	parts := strings.Split(s, ":")
	if len(parts) != n {
		return false
	}
	for _, part := range parts {
		if _, err := strconv.ParseUint(part, 10, bitSize); err != nil {
			return false
		}
	}
	return true
}
