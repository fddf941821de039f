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

	"k8s.io/apimachinery/pkg/api/meta"
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

// DuplicateOf returns, of others (IPAddresses listed by spec.address; a
// itself may be among them), the one that keeps a's spec.address if it is
// not a, or nil when a keeps it. Every IPAddress recording an address but
// the one that keeps it is a duplicate: the core reports it Pending
// (ReasonDuplicate) and never matches it, and a driver holds nothing for it.
// The rule is written here once; the core and the drivers both apply it.
//
// The one that keeps the address is, in this order:
//  1. one the core has already let keep it (its Bound condition is set,
//     with a reason other than ReasonDuplicate): a verdict once given
//     stands, so a newcomer never takes the address from one in use;
//  2. one bound to a claim (claimRef with a uid): a driver records an
//     address bound from birth, before the core first sees it;
//  3. the one created first;
//  4. the one whose name sorts first: creation timestamps have second
//     precision, so two made within one second tie on 3.
func (a *IPAddress) DuplicateOf(others []IPAddress) *IPAddress {
	first := a
	for i := range others {
		if o := &others[i]; o.UID != a.UID && o.Spec.Address == a.Spec.Address && o.keepsAddressBefore(first) {
			first = o
		}
	}
	if first == a {
		return nil
	}
	return first
}

// keepsAddressBefore: a comes before b in DuplicateOf's order.
func (a *IPAddress) keepsAddressBefore(b *IPAddress) bool {
	if x, y := a.KeepsAddress(), b.KeepsAddress(); x != y {
		return x
	}
	if x, y := a.HasBinding(), b.HasBinding(); x != y {
		return x
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// KeepsAddress reports whether the core's last verdict on a let it keep its
// spec.address: its Bound condition is set, with a reason other than
// ReasonDuplicate. Only the core writes that condition.
func (a *IPAddress) KeepsAddress() bool {
	c := meta.FindStatusCondition(a.Status.Conditions, ConditionBound)
	return c != nil && c.Reason != ReasonDuplicate
}

// HasBinding reports whether claimRef names a claim by uid: the binding is
// complete, not a pre-binding waiting for its claim.
func (a *IPAddress) HasBinding() bool {
	return a.Spec.ClaimRef != nil && a.Spec.ClaimRef.UID != ""
}
