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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// IPAddressClassSpec names the driver that serves a class of addresses and the
// policy its addresses follow.
type IPAddressClassSpec struct {
	// provisioner names the driver that serves this class, for example
	// metallb.drivers.local.sdn.cozystack.io. It cannot change: the addresses
	// of a class belong to its driver.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.provisioner is immutable"
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="spec.provisioner must be a DNS subdomain such as metallb.drivers.local.sdn.cozystack.io"
	Provisioner string `json:"provisioner"`

	// reclaimPolicy is copied onto every address the driver provisions for this
	// class; the address's own copy is the one that takes effect.
	// +optional
	// +kubebuilder:default=Retain
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`

	// parameters are for the driver alone; the core never reads them. Each
	// driver documents and validates its own.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Parameters *runtime.RawExtension `json:"parameters,omitempty"`

	// releaseDelay, when set, returns a Released address of this class to
	// Available once it has been Released this long, unless the address is
	// held. Unset, Released addresses stay Released.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+)$')",message="spec.releaseDelay must be a non-negative duration such as 90s, 30m or 1h30m"
	ReleaseDelay *metav1.Duration `json:"releaseDelay,omitempty"`

	// namespaceSelector says which namespaces may claim from this class, by
	// their labels. Absent, every namespace may; an empty selector ({}) also
	// matches every namespace. A claim from a namespace it does not match
	// stays Pending (reason ClassNotAllowed) and nothing is provisioned for
	// it. Claims admitted earlier keep their addresses when it changes.
	// Admission checks the operators and values; label keys and values that
	// are malformed (too costly to check in CEL on an unbounded selector)
	// make the core refuse every claim of the class with ClassNotAllowed,
	// naming the error.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="spec.namespaceSelector.matchExpressions[].operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",message="spec.namespaceSelector.matchExpressions[] with operator In or NotIn needs at least one value"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",message="spec.namespaceSelector.matchExpressions[] with operator Exists or DoesNotExist takes no values"
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// addressesPerNamespace, when set, is the most addresses one namespace
	// may hold from this class, counted per address: a Dual claim counts
	// two. A claim that would exceed it stays Pending (reason
	// ClassLimitReached) until the namespace releases enough. Lowering it
	// never takes addresses away: the class's WithinLimits condition names
	// the namespaces over it instead. 0 admits no new claim.
	// +optional
	// +kubebuilder:validation:Minimum=0
	AddressesPerNamespace *int32 `json:"addressesPerNamespace,omitempty"`
}

// IPAddressClassStatus is written by the class's driver (Rendered, families
// and the address counts) and by the core (WithinLimits).
type IPAddressClassStatus struct {
	// conditions report whether the driver could render the class's backend
	// configuration (type Rendered, set by the driver) and, on a class with
	// spec.addressesPerNamespace, whether every namespace holds no more than
	// the limit (type WithinLimits, set by the core).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// families are the address families the class's ranges serve, as its
	// driver rendered them. The core refuses a claim for another family
	// (reason FamilyNotServed) and the driver provisions none; empty while no
	// driver has reported, or for a class of pre-provisioned addresses.
	// +listType=set
	// +optional
	Families []IPFamily `json:"families,omitempty"`

	// capacity is how many addresses the class's ranges offer, as its
	// driver hands them out (MetalLB's avoidBuggyIPs, say, leaves out the
	// IPv4 addresses ending in .0 and .255). It keeps its last rendered
	// value while the parameters cannot be rendered. Absent while no driver
	// has rendered the class, or for a class of pre-provisioned addresses.
	// +optional
	Capacity *AddressCounts `json:"capacity,omitempty"`

	// used counts the IPAddress objects of the class, whatever their phase:
	// each holds its address in the backend, Released ones included, until
	// the IPAddress is deleted. The driver counts them through its cache and
	// writes the count at most about once a second, so it may trail a burst
	// of claims by that much.
	// +optional
	Used *AddressCounts `json:"used,omitempty"`

	// available is capacity less the used addresses inside the class's
	// ranges (addresses kept outside them, listed on the Rendered
	// condition, take nothing from the ranges), never below 0. Addresses
	// the backend gave to workloads without a claim are not known to the
	// driver and not subtracted.
	// +optional
	Available *AddressCounts `json:"available,omitempty"`
}

// AddressCounts is a number of addresses, in total and per family. A count
// that does not fit an int64 (an IPv6 range wider than 2^63 addresses) is
// 9223372036854775807 (2^63-1), read "at least that many"; an available
// count of a range that large stays there too.
type AddressCounts struct {
	// total is the sum over the families, saturating as each count does.
	// +required
	// +kubebuilder:validation:Minimum=0
	Total int64 `json:"total"`

	// ipv4 is the IPv4 part; absent when the class neither serves IPv4
	// nor has an IPv4 address.
	// +optional
	// +kubebuilder:validation:Minimum=0
	IPv4 *int64 `json:"ipv4,omitempty"`

	// ipv6 is the IPv6 part; absent when the class neither serves IPv6
	// nor has an IPv6 address.
	// +optional
	// +kubebuilder:validation:Minimum=0
	IPv6 *int64 `json:"ipv6,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ipclass,categories=ipam
// +kubebuilder:printcolumn:name="Provisioner",type=string,JSONPath=`.spec.provisioner`
// +kubebuilder:printcolumn:name="Reclaim",type=string,JSONPath=`.spec.reclaimPolicy`
// +kubebuilder:printcolumn:name="Release-Delay",type=string,JSONPath=`.spec.releaseDelay`
// +kubebuilder:printcolumn:name="Default",type=string,JSONPath=`.metadata.annotations.ipaddressclass\.local\.sdn\.cozystack\.io/is-default-class`
// +kubebuilder:printcolumn:name="Namespaces",type=string,JSONPath=`.spec.namespaceSelector`,description="Which namespaces may claim from the class (empty: all)"
// +kubebuilder:printcolumn:name="Per-Namespace",type=integer,JSONPath=`.spec.addressesPerNamespace`,description="The most addresses one namespace may hold from the class (empty: no limit)"
// +kubebuilder:printcolumn:name="Rendered",type=string,JSONPath=`.status.conditions[?(@.type=="Rendered")].status`
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.status.capacity.total`,description="Addresses the class's ranges offer"
// +kubebuilder:printcolumn:name="Used",type=integer,JSONPath=`.status.used.total`,description="IPAddress objects of the class, in any phase"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.available.total`,description="Addresses of the ranges no IPAddress of the class holds"
// +kubebuilder:printcolumn:name="Families",type=string,JSONPath=`.status.families`,priority=1,description="Address families the class's ranges serve"
// +kubebuilder:printcolumn:name="IPv4-Used",type=integer,JSONPath=`.status.used.ipv4`,priority=1
// +kubebuilder:printcolumn:name="IPv4-Capacity",type=integer,JSONPath=`.status.capacity.ipv4`,priority=1
// +kubebuilder:printcolumn:name="IPv6-Used",type=integer,JSONPath=`.status.used.ipv6`,priority=1
// +kubebuilder:printcolumn:name="IPv6-Capacity",type=integer,JSONPath=`.status.capacity.ipv6`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// IPAddressClass is a kind of address: the driver that serves it, the range it
// carves from (in the driver's parameters), and what happens to its addresses
// when their claims go. It is the StorageClass of addresses.
type IPAddressClass struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// +required
	Spec IPAddressClassSpec `json:"spec"`

	// +optional
	Status IPAddressClassStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressClassList contains a list of IPAddressClass.
type IPAddressClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []IPAddressClass `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &IPAddressClass{}, &IPAddressClassList{})
		return nil
	})
}
