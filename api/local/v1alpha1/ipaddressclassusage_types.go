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

// IPAddressClassUsageSpec is the ledger of one namespace's claims admitted to
// one class.
type IPAddressClassUsageSpec struct {
	// claims admitted to draw from the class, with the addresses each counts
	// for, sorted by name. An entry goes when its claim is deleted.
	// +listType=map
	// +listMapKey=name
	// +optional
	Claims []AdmittedClaim `json:"claims,omitempty"`

	// addresses is the sum of the claims' addresses: what counts against the
	// class's addressesPerNamespace.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Addresses int32 `json:"addresses,omitempty"`
}

// AdmittedClaim is one claim in a usage ledger.
type AdmittedClaim struct {
	// name of the claim, in the ledger's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// uid of the claim: a later claim of the same name is a different claim.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid"`

	// addresses the claim counts for: one per family it asks for.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2
	Addresses int32 `json:"addresses"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ipusage,categories=ipam
// +kubebuilder:printcolumn:name="Addresses",type=integer,JSONPath=`.spec.addresses`
// +kubebuilder:printcolumn:name="Claims",type=string,JSONPath=`.spec.claims[*].name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// IPAddressClassUsage is the core's record of the addresses one namespace
// holds from one class with spec.addressesPerNamespace; it is named after the
// class. Admitting a claim writes it with optimistic concurrency, so two
// claims racing for the namespace's last address cannot both be admitted.
// Only the core writes it; tenants may read it.
type IPAddressClassUsage struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// +optional
	Spec IPAddressClassUsageSpec `json:"spec,omitzero"`
}

// +kubebuilder:object:root=true

// IPAddressClassUsageList contains a list of IPAddressClassUsage.
type IPAddressClassUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []IPAddressClassUsage `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &IPAddressClassUsage{}, &IPAddressClassUsageList{})
		return nil
	})
}
