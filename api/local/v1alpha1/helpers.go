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
	"net/netip"
	"slices"
)

// Key is the "namespace/name" of the referenced claim, the form the managers
// index addresses by.
func (r *ClaimReference) Key() string {
	return r.Namespace + "/" + r.Name
}

// ClaimKey is the "namespace/name" of c, matching ClaimReference.Key.
func (c *IPAddressClaim) ClaimKey() string {
	return c.Namespace + "/" + c.Name
}

// ClassName is the class the claim draws from: the one it names, or, when
// it names none, the default it resolved to (status.className). While a
// family is unbound a tenant may re-target the claim by changing
// spec.className, which wins over what it resolved to before.
func (c *IPAddressClaim) ClassName() string {
	if c.Spec.ClassName != "" {
		return c.Spec.ClassName
	}
	return c.Status.ClassName
}

// AdmittedTo is the class the core admitted the claim to, if it is the
// class the claim asks for now, else "". Only the core writes
// status.admittedClassName, through the status subresource tenants cannot
// write; a claim re-targeted to another class is not admitted until the
// core admits it again. A driver provisions only for AdmittedTo's class.
func (c *IPAddressClaim) AdmittedTo() string {
	if name := c.Status.AdmittedClassName; name != "" && name == c.ClassName() {
		return name
	}
	return ""
}

// Serves reports whether the class's driver said it can give addresses of
// family f (status.families); a class no driver reported on yet may serve
// any.
func (c *IPAddressClass) Serves(f IPFamily) bool {
	return len(c.Status.Families) == 0 || slices.Contains(c.Status.Families, f)
}

// IP parses spec.address. Admission only lets canonical IPs through, so an
// error here means the object predates a stricter schema.
func (a *IPAddress) IP() (netip.Addr, error) {
	return netip.ParseAddr(a.Spec.Address)
}

// Family is the family of spec.address, or "" if it does not parse.
func (a *IPAddress) Family() IPFamily {
	ip, err := a.IP()
	switch {
	case err != nil:
		return ""
	case ip.Is4():
		return IPv4
	default:
		return IPv6
	}
}

// IsDefault reports whether the class carries the default-class annotation.
func (c *IPAddressClass) IsDefault() bool {
	return c.Annotations[AnnotationIsDefaultClass] == "true"
}

// Held reports whether the address carries the held annotation.
func (a *IPAddress) Held() bool {
	return a.Annotations[AnnotationHeld] == "true"
}

// FamilyOf returns the family of ip.
func FamilyOf(ip netip.Addr) IPFamily {
	if ip.Is4() {
		return IPv4
	}
	return IPv6
}
