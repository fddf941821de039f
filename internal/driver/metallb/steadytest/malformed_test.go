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

package steadytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestMalformedInputIsRefusedOrExplained tries malformed MetalLB classes
// and Services MetalLB refuses, with both managers and MetalLB running:
// each gets a condition or event saying what is wrong, and the bound claim
// and the Service carrying its address are left exactly as they were.
// Malformed claims and addresses, and what the API server refuses, are the
// core's (internal/core); the Services the driver refuses for any backend
// are the contract's ("refusal/every request the driver cannot honour").
func TestMalformedInputIsRefusedOrExplained(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)

	// What must not be disturbed: a claim of a MetalLB class carried by a
	// Service.
	ns, class, v4, addr := mt.ClaimedAndHeld(t, g)
	mt.Kit.Create(g, b.Service(ns, "front", b.ForClaim("web")))
	g.Eventually(mt.IngressOf(g, ns, "front"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
	g.Eventually(func() string {
		return testkit.Condition(mt.Kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionAssociated).Message
	}, mt.Timeout, mt.Tick).Should(HavePrefix("Carried by Service " + ns + "/front"))
	g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(Equal([]string{ns + "/front"}), "the hold has let go")
	static := class + "-static"
	mt.Kit.Make(t, g, b.Class(static, "static.drivers.local.sdn.cozystack.io"))
	mt.Kit.Create(g, b.Claim(ns, "static-web", b.OfClass(static)))
	before := carriedNow(g, ns, addr.Name)

	cases := append(malformedClasses(class, v4), malformedServices(ns, addr.Address)...)
	g.Expect(len(cases)).To(BeNumerically(">=", 16))
	mt.Kit.TryMalformed(t, cases, mt.Timeout, mt.Tick)

	// Every bad input has been seen; nothing bound moved.
	g.Consistently(func() []any { return carriedNow(g, ns, addr.Name) }, 3*time.Second, 200*time.Millisecond).Should(Equal(before))
	g.Expect(mt.Holders(g, addr.Address)()).To(Equal([]string{ns + "/front"}), "only the carrier holds the address")
}

// carriedNow is everything the malformed inputs must not change: the bound
// claim, its address and the Service carrying it, down to their resource
// versions.
func carriedNow(g Gomega, ns, name string) []any {
	web, a, front := mt.Kit.Claim(g, ns, "web"), mt.Kit.Address(g, name), mt.Kit.Service(g, ns, "front")
	return []any{web.Status.Phase, web.Status.Addresses, web.ResourceVersion,
		a.Status.Phase, a.Status.AssociatedTo, testkit.Reason(a.Status.Conditions, v1alpha1.ConditionConflict), a.ResourceVersion,
		mt.IngressOf(g, ns, "front")(), front.ResourceVersion}
}

// classWith is a class of the MetalLB driver with parameters.
func classWith(name, parameters string) *v1alpha1.IPAddressClass {
	return b.Class(name, mt.Provisioner, b.Parameters(parameters))
}

func malformedClasses(bound, boundV4 string) []testkit.Malformed {
	fresh := func() string { v4, _ := mt.FreshRange(); return v4 }
	base := func() string { return strings.TrimSuffix(fresh(), "0/28") }
	backwards, mixed := base(), base()
	bad := func(i int, parameters, detail string) testkit.Malformed {
		name := fmt.Sprintf("%s-bad-%d", bound, i)
		return testkit.Malformed{Name: "class: " + detail, Obj: classWith(name, parameters), Reason: metallb.ReasonInvalidParameters, Detail: detail}
	}
	v4 := fresh()
	return []testkit.Malformed{
		bad(1, `{"addresses": ["`+fresh()+`"], "adresses": []}`, "parameters.adresses: unknown field"),
		bad(2, `{"addresses": ["`+base()+`300/28"]}`, "parameters.addresses[0]"),
		bad(3, `{"addresses": ["`+backwards+`9-`+backwards+`1"]}`, "is backwards"),
		bad(4, `{"addresses": ["`+base()+`1/28"]}`, "has host bits set"),
		bad(5, `{}`, "parameters.addresses is required"),
		bad(6, `{"addresses": ["`+fresh()+`"], "advertisement": {"l2": {}, "bgp": {}}}`, "parameters.advertisement: set exactly one of l2 or bgp"),
		bad(7, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"aggregationLength": 99}}}`, "parameters.advertisement.bgp.aggregationLength: 99 is out of range"),
		bad(8, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"communities": ["70000:1"]}}}`, `"70000:1" is not a community`),
		bad(9, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"peers": ["Peer_A"]}}}`, `"Peer_A" is not a BGPPeer name`),
		bad(10, `{"addresses": ["`+fresh()+`"], "advertisement": {"l2": {"interfaces": ["a/b"]}}}`, `"a/b" is not a network interface name`),
		bad(11, `{"addresses": "`+fresh()+`"}`, "parameters.addresses: want a list"),
		bad(12, `{"addresses": ["::ffff:`+strings.TrimSuffix(v4, "/28")+`/124"]}`, "IPv4-mapped IPv6"),
		bad(13, `{"addresses": ["`+fresh()+`", "`+mixed+`0-`+mixed+`1/28"]}`, "parameters.addresses[1]"),
		{Name: "class: overlapping the bound class's pool", Obj: classWith(bound+"-bad-14", `{"addresses": ["`+boundV4+`"]}`),
			Reason: metallb.ReasonOverlapsOtherPool, Detail: "IPAddressPool metallb-system/" + params.PoolName(bound)},
	}
}

func malformedServices(ns, carried string) []testkit.Malformed {
	refused := func(name, detail string, opts ...b.ServiceOption) testkit.Malformed {
		return testkit.Malformed{Name: "service: " + detail, Obj: b.Service(ns, name, opts...), Reason: v1alpha1.EventAssociationRefused, Detail: detail}
	}
	return []testkit.Malformed{
		refused("names-static", "IPAddressClaim static-web is served by static.drivers.local.sdn.cozystack.io", b.ForClaim("static-web")),
		{Name: "service: pinned by hand to the carried address", Obj: b.Service(ns, "pinned-thief", b.PinnedByHand(carried)),
			Reason: "AllocationFailed", Detail: fmt.Sprintf("Failed to allocate IP for %q", ns+"/pinned-thief")},
	}
}
