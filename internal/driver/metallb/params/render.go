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
	"net/netip"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// The MetalLB kinds the driver renders, and GroupVersion, theirs.
var (
	GroupVersion        = schema.GroupVersion{Group: "metallb.io", Version: "v1beta1"}
	IPAddressPoolGVK    = GroupVersion.WithKind("IPAddressPool")
	L2AdvertisementGVK  = GroupVersion.WithKind("L2Advertisement")
	BGPAdvertisementGVK = GroupVersion.WithKind("BGPAdvertisement")
)

const (
	// ManagedByValue is the value of localv1alpha1.LabelManagedBy on what the
	// driver renders and creates.
	ManagedByValue = "metallb-iad"
	// namePrefix keeps rendered names apart from pools admins write by hand.
	namePrefix = "iad-"
)

// PoolName is the name of the IPAddressPool rendered for a class.
func PoolName(className string) string { return namePrefix + className }

// AdvertisementName is the name of the L2Advertisement or BGPAdvertisement
// rendered for a class. It equals PoolName: the two kinds never collide.
func AdvertisementName(className string) string { return namePrefix + className }

// Pool renders the class's IPAddressPool: never auto-assigned (only the
// driver's placeholders draw from it), covering the class's ranges merged
// and sorted, plus one single-address entry for each keep address outside
// them, so that shrinking a class never strands an address MetalLB has
// already handed out. Owner references are the caller's.
func Pool(className, namespace string, p *Parameters, keep []netip.Addr) *unstructured.Unstructured {
	ranges, outside := ipaddr.Merge(p.Ranges), Outside(p, keep)
	addresses := make([]any, 0, len(ranges)+len(outside))
	for _, r := range ranges {
		addresses = append(addresses, r.String())
	}
	for _, a := range outside {
		addresses = append(addresses, ipaddr.SingleAddress(a).String())
	}
	return object(IPAddressPoolGVK, PoolName(className), namespace, className, map[string]any{
		"addresses":     addresses,
		"autoAssign":    false,
		"avoidBuggyIPs": p.AvoidBuggyIPs,
	})
}

// Outside returns, sorted and without repeats, the addresses of addrs that
// lie in none of the class's ranges.
func Outside(p *Parameters, addrs []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		a = a.WithZone("")
		if a.IsValid() && !slices.ContainsFunc(p.Ranges, func(r ipaddr.Range) bool { return r.Contains(a) }) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// AggregationConflicts describes the keep addresses that Pool would add as
// single-address entries but that the class's BGP aggregation length would
// make MetalLB refuse: a /32 (or /128) cannot be rolled up to a shorter
// prefix. Empty unless the class uses BGP with a shortened aggregation
// length and some bound address lies outside the class's ranges; the
// caller should then report the class instead of applying the pool.
func AggregationConflicts(p *Parameters, keep []netip.Addr) []string {
	bgp := p.BGP()
	if bgp == nil {
		return nil
	}
	var out []string
	for _, a := range Outside(p, keep) {
		n, name := bgp.AggregationLengthV6, "aggregationLengthV6"
		if a.Is4() {
			n, name = bgp.AggregationLength, "aggregationLength"
		}
		if n != nil && int(*n) < a.BitLen() {
			out = append(out, fmt.Sprintf("bound address %s is outside the class's addresses, and %s %d cannot aggregate its /%d",
				a, name, *n, a.BitLen()))
		}
	}
	return out
}

// Advertisement renders the class's L2Advertisement (the default) or
// BGPAdvertisement, selecting only the class's pool by name.
func Advertisement(className, namespace string, p *Parameters) *unstructured.Unstructured {
	spec := map[string]any{"ipAddressPools": []any{PoolName(className)}}
	if bgp := p.BGP(); bgp != nil {
		if bgp.AggregationLength != nil {
			spec["aggregationLength"] = int64(*bgp.AggregationLength)
		}
		if bgp.AggregationLengthV6 != nil {
			spec["aggregationLengthV6"] = int64(*bgp.AggregationLengthV6)
		}
		if bgp.LocalPref != nil {
			spec["localPref"] = int64(*bgp.LocalPref)
		}
		setStrings(spec, "communities", bgp.Communities)
		setStrings(spec, "peers", bgp.Peers)
		setSelectors(spec, bgp.NodeSelectors)
		return object(BGPAdvertisementGVK, AdvertisementName(className), namespace, className, spec)
	}
	if p.Advertisement != nil && p.Advertisement.L2 != nil {
		setStrings(spec, "interfaces", p.Advertisement.L2.Interfaces)
		setSelectors(spec, p.Advertisement.L2.NodeSelectors)
	}
	return object(L2AdvertisementGVK, AdvertisementName(className), namespace, className, spec)
}

func object(gvk schema.GroupVersionKind, name, namespace, className string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace(namespace)
	u.SetLabels(map[string]string{
		localv1alpha1.LabelManagedBy: ManagedByValue,
		localv1alpha1.LabelClass:     className,
	})
	return u
}

// The helpers below build plain JSON values, the only kind an unstructured
// object may hold.

func setStrings(spec map[string]any, key string, values []string) {
	if len(values) > 0 {
		spec[key] = anyList(values)
	}
}

func setSelectors(spec map[string]any, selectors []metav1.LabelSelector) {
	if len(selectors) == 0 {
		return
	}
	list := make([]any, len(selectors))
	for i, sel := range selectors {
		m := map[string]any{}
		if len(sel.MatchLabels) > 0 {
			labels := map[string]any{}
			for k, v := range sel.MatchLabels {
				labels[k] = v
			}
			m["matchLabels"] = labels
		}
		var exprs []any
		for _, e := range sel.MatchExpressions {
			expr := map[string]any{"key": e.Key, "operator": string(e.Operator)}
			if len(e.Values) > 0 {
				expr["values"] = anyList(e.Values)
			}
			exprs = append(exprs, expr)
		}
		if len(exprs) > 0 {
			m["matchExpressions"] = exprs
		}
		list[i] = m
	}
	spec["nodeSelectors"] = list
}

func anyList(values []string) []any {
	list := make([]any, len(values))
	for i, s := range values {
		list[i] = s
	}
	return list
}
