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

// IPAddressClaimSpec is the whole tenant API: which class, which family, and
// optionally one specific address.
// +kubebuilder:validation:XValidation:rule="!has(self.addressName) || self.family != 'Dual'",message="spec.addressName names a single address and cannot be combined with family Dual"
type IPAddressClaimSpec struct {
	// className names the IPAddressClass to draw from; empty means the class
	// annotated as the default.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="spec.className must be the name of an IPAddressClass (a DNS subdomain)"
	ClassName string `json:"className,omitempty"`

	// family is IPv4, IPv6, or Dual (one address of each). It cannot change.
	// +optional
	// +kubebuilder:default=IPv4
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.family is immutable"
	Family IPFamily `json:"family,omitempty"`

	// addressName pre-binds the claim to one specific IPAddress, which must
	// be Available or pre-bound to this claim. No driver provisions for such
	// a claim; it waits, Pending, until that address appears.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="spec.addressName must be the name of an IPAddress (a DNS subdomain such as ip-203-0-113-7)"
	AddressName string `json:"addressName,omitempty"`
}

// IPAddressClaimPhase is where a claim is in its life.
// +kubebuilder:validation:Enum=Pending;Bound;Lost
type IPAddressClaimPhase string

const (
	// ClaimPending: not every requested family is bound yet.
	ClaimPending IPAddressClaimPhase = "Pending"
	// ClaimBound: every requested family is bound.
	ClaimBound IPAddressClaimPhase = "Bound"
	// ClaimLost: the claim was bound and a bound address is gone or lost. It
	// returns to Bound when the address comes back; it is never silently
	// re-provisioned.
	ClaimLost IPAddressClaimPhase = "Lost"
)

// ClaimedAddress is one address bound to a claim.
type ClaimedAddress struct {
	// name of the IPAddress.
	Name string `json:"name"`
	// address is the IP itself.
	Address string `json:"address"`
}

// IPAddressClaimStatus is derived by the core from the addresses whose claimRef
// names the claim.
type IPAddressClaimStatus struct {
	// phase summarizes the claim.
	// +optional
	Phase IPAddressClaimPhase `json:"phase,omitempty"`

	// className records the class the claim resolved to. It sticks: moving
	// the default annotation later does not re-target the claim.
	// +optional
	ClassName string `json:"className,omitempty"`

	// admittedClassName names the class the core admitted the claim to: the
	// class's namespaceSelector matched the claim's namespace and, under
	// spec.addressesPerNamespace, the claim holds a place in its namespace's
	// IPAddressClassUsage. Only the core writes it. A driver provisions only
	// for a claim admitted to the class it asks for now; re-targeting the
	// claim to another class clears it until the core admits the claim
	// there.
	// +optional
	AdmittedClassName string `json:"admittedClassName,omitempty"`

	// addresses bound to the claim, sorted by name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Addresses []ClaimedAddress `json:"addresses,omitempty"`

	// conditions: ClassResolved and Bound.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ipclaim,categories=ipam
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.className`
// +kubebuilder:printcolumn:name="Family",type=string,JSONPath=`.spec.family`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Addresses",type=string,JSONPath=`.status.addresses[*].address`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Bound")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// IPAddressClaim asks for an address and keeps it until the claim is deleted.
// It is the PersistentVolumeClaim of addresses.
type IPAddressClaim struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// +optional
	// +kubebuilder:default={}
	Spec IPAddressClaimSpec `json:"spec,omitzero"`

	// +optional
	Status IPAddressClaimStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressClaimList contains a list of IPAddressClaim.
type IPAddressClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []IPAddressClaim `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &IPAddressClaim{}, &IPAddressClaimList{})
		return nil
	})
}
