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

// ReclaimPolicy says what happens to an address when its claim goes.
// +kubebuilder:validation:Enum=Retain;Delete
type ReclaimPolicy string

const (
	// ReclaimRetain keeps the address, Released, until an admin deletes or
	// recycles it, or the class's releaseDelay returns it to the pool.
	ReclaimRetain ReclaimPolicy = "Retain"
	// ReclaimDelete deletes the IPAddress object; its driver releases the
	// backend reservation first.
	ReclaimDelete ReclaimPolicy = "Delete"
)

// IPFamily is the address family a claim asks for.
// +kubebuilder:validation:Enum=IPv4;IPv6;Dual
type IPFamily string

const (
	// IPv4 asks for one IPv4 address.
	IPv4 IPFamily = "IPv4"
	// IPv6 asks for one IPv6 address.
	IPv6 IPFamily = "IPv6"
	// Dual asks for one address of each family.
	Dual IPFamily = "Dual"
)

// Families lists the single families a claim of family f asks for, IPv4 first.
func (f IPFamily) Families() []IPFamily {
	switch f {
	case Dual:
		return []IPFamily{IPv4, IPv6}
	case IPv6:
		return []IPFamily{IPv6}
	default:
		return []IPFamily{IPv4}
	}
}
