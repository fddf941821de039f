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
	"k8s.io/apimachinery/pkg/types"
)

// IPAddressSpec is one concrete address and, in claimRef, the single record of
// its binding.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.claimRef) || !has(self.claimRef) || (self.claimRef.__namespace__ == oldSelf.claimRef.__namespace__ && self.claimRef.name == oldSelf.claimRef.name && (!has(oldSelf.claimRef.uid) || size(oldSelf.claimRef.uid) == 0 || (has(self.claimRef.uid) && self.claimRef.uid == oldSelf.claimRef.uid)))",message="spec.claimRef cannot be pointed at another claim; clear it first, on a Released address"
type IPAddressSpec struct {
	// address is the IP, IPv4 or IPv6, in canonical form (IPv6 as RFC 5952
	// writes it, e.g. 2001:db8::7). It cannot change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="spec.address must be a valid IPv4 or IPv6 address"
	// +kubebuilder:validation:XValidation:rule="!isIP(self) || string(ip(self)) == self",message="spec.address must be written in canonical form (IPv6 in RFC 5952 lower-case compressed form, IPv4 without leading zeros)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.address is immutable"
	Address string `json:"address"`

	// className is the IPAddressClass this address belongs to. It cannot
	// change: the class's driver holds the address.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="spec.className must be the name of an IPAddressClass (a DNS subdomain)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.className is immutable"
	ClassName string `json:"className"`

	// reclaimPolicy says what happens to this address when its claim goes.
	// +optional
	// +kubebuilder:default=Retain
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`

	// claimRef binds the address to a claim. The core sets it when it matches
	// the address, and clears it when the class's releaseDelay returns a
	// Released address. An admin may pre-bind an address at creation (uid
	// left empty for the core to complete) and may clear claimRef on a
	// Released address to recycle it.
	// +optional
	ClaimRef *ClaimReference `json:"claimRef,omitempty"`

	// source says where the address comes from. It cannot change.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.source is immutable"
	Source AddressSource `json:"source"`
}

// ClaimReference points at an IPAddressClaim.
type ClaimReference struct {
	// namespace of the claim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="spec.claimRef.namespace must be a namespace name (a DNS label)"
	Namespace string `json:"namespace"`

	// name of the claim.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="spec.claimRef.name must be a claim name (a DNS subdomain)"
	Name string `json:"name"`

	// uid of the claim. Empty on a pre-binding, which the core completes when
	// the claim accepts it; an address whose uid differs from the live claim's
	// belongs to an earlier claim of the same name and is never adopted.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid,omitempty"`
}

// AddressSource is a union: exactly one member is set.
// +kubebuilder:validation:XValidation:rule="has(self.fromClass) != has(self.providerRef)",message="spec.source must set exactly one of fromClass or providerRef"
type AddressSource struct {
	// fromClass: the address is carved from its class's range.
	// +optional
	FromClass *FromClassSource `json:"fromClass,omitempty"`

	// providerRef: the address wraps a reservation the provider holds under
	// its own identifier.
	// +optional
	ProviderRef *ProviderReference `json:"providerRef,omitempty"`
}

// FromClassSource marks an address carved from its class's range. It has no
// fields.
type FromClassSource struct{}

// ProviderReference names a reservation held by the address's provider.
type ProviderReference struct {
	// id is the provider's identifier of the reservation.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	ID string `json:"id"`
}

// IPAddressPhase is where an address is in its life.
// +kubebuilder:validation:Enum=Pending;Available;Bound;Released;Conflict;Lost
type IPAddressPhase string

const (
	// AddressPending: not usable yet (invalid, duplicate, or waiting for its
	// claim to accept a pre-binding).
	AddressPending IPAddressPhase = "Pending"
	// AddressAvailable: no claimRef; free for matching.
	AddressAvailable IPAddressPhase = "Available"
	// AddressBound: bound to a live claim.
	AddressBound IPAddressPhase = "Bound"
	// AddressReleased: its claim is gone and the policy is Retain.
	AddressReleased IPAddressPhase = "Released"
	// AddressConflict: set by the driver while a Service not entitled to the
	// address holds it in the backend.
	AddressConflict IPAddressPhase = "Conflict"
	// AddressLost: set by the driver when the backend reservation is gone for
	// good.
	AddressLost IPAddressPhase = "Lost"
)

// WorkloadReference names the workload an address is attached to.
type WorkloadReference struct {
	// kind of the workload, e.g. Service.
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// namespace of the workload.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// name of the workload.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// uid of the workload.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid,omitempty"`
}

// IPAddressStatus is derived: the core writes phase (except Conflict and Lost)
// and the Bound condition; the driver writes associatedTo, its own conditions,
// and the Conflict and Lost phases.
type IPAddressStatus struct {
	// phase summarizes where the address is in its life.
	// +optional
	Phase IPAddressPhase `json:"phase,omitempty"`

	// lastPhaseTransitionTime is when phase last changed. The class's
	// releaseDelay counts instead from the Released condition, which a
	// Conflict or Lost phase in between leaves alone.
	// +optional
	LastPhaseTransitionTime *metav1.Time `json:"lastPhaseTransitionTime,omitempty"`

	// associatedTo is the workload carrying the address; unset, the address
	// is reserved and inert.
	// +optional
	AssociatedTo *WorkloadReference `json:"associatedTo,omitempty"`

	// conditions: Bound (core); Held, Associated, Conflict (driver).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ipaddr,categories=ipam
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.spec.className`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Claim-Namespace",type=string,JSONPath=`.spec.claimRef.namespace`
// +kubebuilder:printcolumn:name="Claim",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.associatedTo.name`
// +kubebuilder:printcolumn:name="Reclaim",type=string,JSONPath=`.spec.reclaimPolicy`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase != 'Bound' || !has(oldSelf.spec.claimRef) || has(self.spec.claimRef)",message="spec.claimRef of a Bound address cannot be cleared; delete the claim to release the address",fieldPath=".spec.claimRef"

// IPAddress is one concrete address; the object is the reservation. It is the
// PersistentVolume of addresses.
type IPAddress struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// +required
	Spec IPAddressSpec `json:"spec"`

	// +optional
	Status IPAddressStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressList contains a list of IPAddress.
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []IPAddress `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &IPAddress{}, &IPAddressList{})
		return nil
	})
}
