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

package core_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestMalformedInputIsRefusedOrExplained tries malformed claims, addresses
// and classes, and malformed changes to bound ones: each is refused at
// admission or gets a condition or event saying what is wrong, and the
// bound claim and its address are left exactly as they were. The classes'
// parameters and the Services a driver refuses are each driver's own
// (internal/driver/metallb/steadytest, and drivertest's refusal spec).
func TestMalformedInputIsRefusedOrExplained(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(func() []string { return kit.Finalizers(g, kit.Claim(g, ns, "web")) }, timeout, tick).Should(
		ContainElement(v1alpha1.FinalizerClaimProtection))
	bound := class + "-a"
	kit.Make(t, g, b.Address(bound, "198.18.60.1", class, b.PreBound(ns, "web")))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	kit.Create(g, b.Claim(ns, "unresolved", b.OfClass(class+"-missing")))
	before := boundNow(g, ns, bound)

	cases := append(append(malformedClaims(ns, class, bound), malformedAddresses(ns, class, bound)...),
		admissionRefusals(ns, class, bound)...)
	g.Expect(len(cases)).To(BeNumerically(">=", 30))
	kit.TryMalformed(t, cases, timeout, tick)

	// Every bad input has been seen; nothing bound moved.
	g.Consistently(func() []any { return boundNow(g, ns, bound) }, 3*time.Second, 200*time.Millisecond).Should(Equal(before))
}

// boundNow is everything the malformed inputs must not change: the bound
// claim and its address, down to their resource versions.
func boundNow(g Gomega, ns, address string) []any {
	web, a := kit.Claim(g, ns, "web"), kit.Address(g, address)
	return []any{web.Status.Phase, web.Status.Addresses, web.ResourceVersion, a.Status.Phase, a.Spec.ClaimRef, a.ResourceVersion}
}

func malformedClaims(ns, class, bound string) []testkit.Malformed {
	return []testkit.Malformed{
		{Name: "claim: of a class that does not exist", Obj: b.Claim(ns, "no-class", b.OfClass(class+"-nowhere")),
			Reason: v1alpha1.ReasonClassNotFound, Detail: "IPAddressClass " + class + "-nowhere not found"},
		{Name: "claim: naming an address that does not exist", Obj: b.Claim(ns, "no-address", b.OfClass(class), b.Named("ip-198-18-60-9")),
			Reason: v1alpha1.ReasonWaitingForAddress, Detail: "Waiting for IPAddress ip-198-18-60-9: it does not exist yet"},
		{Name: "claim: naming the address another claim holds", Obj: b.Claim(ns, "thief", b.OfClass(class), b.Named(bound)),
			Reason: v1alpha1.ReasonWaitingForAddress, Detail: "it is bound to claim " + ns + "/web"},
	}
}

func malformedAddresses(ns, class, bound string) []testkit.Malformed {
	return []testkit.Malformed{
		{Name: "address: pre-bound to a claim that does not exist", Obj: b.Address(class+"-ghost", "198.18.60.2", class, b.PreBound(ns, "ghost")),
			Reason: v1alpha1.ReasonReleased, Detail: "claim " + ns + "/ghost is gone"},
		{Name: "address: a second object for a bound address", Obj: b.Address(class+"-dup", "198.18.60.1", class),
			Reason: v1alpha1.ReasonDuplicate, Detail: "IPAddress " + bound + " already has address 198.18.60.1"},
		{Name: "address: pre-bound to a claim of another class", Obj: b.Address(class+"-other", "198.18.60.3", class, b.PreBound(ns, "unresolved")),
			Reason: v1alpha1.ReasonPreBindingRefused, Detail: "the address is of class " + class},
		{Name: "address: pre-bound to a claim that already holds its family", Obj: b.Address(class+"-second", "198.18.60.4", class, b.PreBound(ns, "web")),
			Reason: v1alpha1.ReasonPreBindingRefused, Detail: "the claim already holds an IPv4 address, " + bound},
		{Name: "address: bound to an earlier claim of a live claim's name", Obj: b.Address(class+"-stale", "198.18.60.5", class,
			b.BoundTo(ns, "web", types.UID("00000000-0000-0000-0000-000000000001"))),
			Reason: v1alpha1.ReasonReleased, Detail: "was re-created"},
	}
}

// admissionRefusals are malformed objects and changes the API server refuses.
func admissionRefusals(ns, class, bound string) []testkit.Malformed {
	addr := func(name, ip string, opts ...b.AddressOption) *v1alpha1.IPAddress {
		return b.Address(class+"-"+name, ip, class, opts...)
	}
	refuse := testkit.Refuse
	const ipMsg = "must be a valid IPv4 or IPv6 address"
	boundAddress := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: bound}}
	onBound := func(f func(a *v1alpha1.IPAddress)) func(client.Object) {
		return func(o client.Object) { f(o.(*v1alpha1.IPAddress)) }
	}
	change := func(what string, mutate func(a *v1alpha1.IPAddress), msg string) testkit.Malformed {
		return kit.RefuseChange(what, boundAddress, onBound(mutate), msg)
	}
	web := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	boundClass := &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: class}}
	return []testkit.Malformed{
		refuse("address that is not an IP", addr("r1", "not-an-ip"), ipMsg),
		refuse("IPv4 address out of range", addr("r2", "198.18.0.256"), ipMsg),
		refuse("address with a prefix", addr("r3", "198.18.0.3/32"), ipMsg),
		refuse("IPv4 address with leading zeros", addr("r4", "198.18.0.04"), ipMsg),
		refuse("IPv6 address with a zone", addr("r5", "fe80::5%eth0"), ipMsg),
		refuse("IPv6 address not in canonical form", addr("r6", "2001:DB8:0:0::6"), "canonical form"),
		refuse("empty address", addr("r7", ""), "spec.address"),
		refuse("source with both members", addr("r8", "198.18.0.8", func(a *v1alpha1.IPAddress) {
			a.Spec.Source.ProviderRef = &v1alpha1.ProviderReference{ID: "r-8"}
		}), "exactly one of fromClass or providerRef"),
		refuse("source with neither member", addr("r9", "198.18.0.9", func(a *v1alpha1.IPAddress) { a.Spec.Source = v1alpha1.AddressSource{} }),
			"exactly one of fromClass or providerRef"),
		refuse("address without a class", addr("r10", "198.18.0.10", func(a *v1alpha1.IPAddress) { a.Spec.ClassName = "" }), "spec.className"),
		refuse("address reclaim policy unknown", addr("r11", "198.18.0.11", b.Reclaim("Recycle")), `supported values: "Retain", "Delete"`),
		refuse("claimRef to a bad namespace", addr("r12", "198.18.0.12", b.PreBound("Tenant_A", "web")), "must be a namespace name"),
		refuse("class reclaim policy unknown", b.Class(class+"-r13", provisioner, b.ClassReclaim("Recycle")), `supported values: "Retain", "Delete"`),
		refuse("class without a provisioner", b.Class(class+"-r14", ""), "spec.provisioner"),
		refuse("negative releaseDelay", b.Class(class+"-r15", provisioner, b.ReleaseDelay(-time.Minute)), "must be a non-negative duration"),
		refuse("claim family unknown", b.Claim(ns, "r16", b.Family("IPv5")), `supported values: "IPv4", "IPv6", "Dual"`),
		refuse("claim addressName not an object name", b.Claim(ns, "r17", b.Named("IP_198.18.0.17")), "must be the name of an IPAddress"),
		refuse("claim addressName with family Dual", b.Claim(ns, "r18", b.Family(v1alpha1.Dual), b.Named("ip-198-18-0-18")), "cannot be combined with family Dual"),
		refuse("claim className not an object name", b.Claim(ns, "r19", b.OfClass("Public Pool")), "must be the name of an IPAddressClass"),
		change("changing a bound address's spec.address", func(a *v1alpha1.IPAddress) { a.Spec.Address = "198.18.0.20" }, "spec.address is immutable"),
		change("changing a bound address's class", func(a *v1alpha1.IPAddress) { a.Spec.ClassName = class + "-other" }, "spec.className is immutable"),
		change("changing a bound address's source", func(a *v1alpha1.IPAddress) {
			a.Spec.Source = v1alpha1.AddressSource{ProviderRef: &v1alpha1.ProviderReference{ID: "r-22"}}
		}, "spec.source is immutable"),
		change("clearing a bound address's claimRef", func(a *v1alpha1.IPAddress) { a.Spec.ClaimRef = nil }, "cannot be cleared"),
		change("pointing a bound address at another claim", func(a *v1alpha1.IPAddress) { a.Spec.ClaimRef.Name = "other" },
			"cannot be pointed at another claim"),
		kit.RefuseChange("changing a bound claim's family", web, func(o client.Object) { o.(*v1alpha1.IPAddressClaim).Spec.Family = v1alpha1.IPv6 },
			"spec.family is immutable"),
		kit.RefuseChange("changing a class's provisioner", boundClass, func(o client.Object) {
			o.(*v1alpha1.IPAddressClass).Spec.Provisioner = "other.drivers.local.sdn.cozystack.io"
		}, "spec.provisioner is immutable"),
	}
}
