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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Parameters are the spec.parameters of a class served by the MetalLB
// driver. Every field maps onto MetalLB v1beta1 objects; nothing here is
// interpreted by the core.
//
// Example:
//
//	parameters:
//	  addresses: ["203.0.113.0/24", "198.51.100.10-198.51.100.20", "2001:db8::/120"]
//	  avoidBuggyIPs: true
//	  advertisement:
//	    bgp:
//	      peers: [peer-a]
type Parameters struct {
	// Addresses are the class's address ranges, IPv4 and/or IPv6: each a
	// CIDR ("203.0.113.0/24", host bits clear) or an inclusive range
	// ("198.51.100.10-198.51.100.20"). Required, at least one, no two
	// overlapping. They become the IPAddressPool's spec.addresses.
	Addresses []string `json:"addresses"`

	// AvoidBuggyIPs makes MetalLB skip IPv4 addresses ending in .0 or .255.
	// It becomes the IPAddressPool's spec.avoidBuggyIPs.
	AvoidBuggyIPs bool `json:"avoidBuggyIPs,omitempty"`

	// Advertisement says how MetalLB announces the class's addresses.
	// Absent, or with neither member set, it means layer 2 with no options.
	Advertisement *AdvertisementOptions `json:"advertisement,omitempty"`

	// Ranges are Addresses parsed, in the same order. Decode fills them.
	Ranges []ipaddr.Range `json:"-"`
}

// AdvertisementOptions chooses layer 2 or BGP; at most one member is set.
type AdvertisementOptions struct {
	// L2 renders an L2Advertisement.
	L2 *L2Options `json:"l2,omitempty"`

	// BGP renders a BGPAdvertisement.
	BGP *BGPOptions `json:"bgp,omitempty"`
}

// L2Options are the L2Advertisement's options.
type L2Options struct {
	// Interfaces limits the announcement to these node interfaces
	// (L2Advertisement spec.interfaces). Empty means all.
	Interfaces []string `json:"interfaces,omitempty"`

	// NodeSelectors limits the announcing nodes (spec.nodeSelectors).
	// Empty means all nodes.
	NodeSelectors []metav1.LabelSelector `json:"nodeSelectors,omitempty"`
}

// BGPOptions are the BGPAdvertisement's options.
type BGPOptions struct {
	// AggregationLength is the prefix length IPv4 routes are rolled up to,
	// 1 to 32 (spec.aggregationLength; MetalLB's default is 32). It may not
	// be shorter than the widest prefix of any IPv4 entry of Addresses.
	AggregationLength *int32 `json:"aggregationLength,omitempty"`

	// AggregationLengthV6 is the same for IPv6, 0 to 128
	// (spec.aggregationLengthV6; MetalLB's default is 128).
	AggregationLengthV6 *int32 `json:"aggregationLengthV6,omitempty"`

	// LocalPref is the BGP LOCAL_PREF attribute (spec.localPref).
	LocalPref *uint32 `json:"localPref,omitempty"`

	// Communities are attached to the announcements (spec.communities):
	// each a standard community "a:b" (16 bits each), a large community
	// "large:a:b:c" (32 bits each) or the name of an alias defined in a
	// MetalLB Community object (a DNS-1123 label).
	Communities []string `json:"communities,omitempty"`

	// Peers limits the announcement to these BGPPeer objects, by name
	// (spec.peers). Empty means all peers.
	Peers []string `json:"peers,omitempty"`

	// NodeSelectors limits the announcing nodes (spec.nodeSelectors).
	NodeSelectors []metav1.LabelSelector `json:"nodeSelectors,omitempty"`
}

// BGP is the class's BGP options, or nil when it advertises over layer 2.
func (p *Parameters) BGP() *BGPOptions {
	if p.Advertisement == nil {
		return nil
	}
	return p.Advertisement.BGP
}
