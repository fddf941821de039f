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
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

func TestClassRendersPoolAndAdvertisement(t *testing.T) {
	t.Parallel()

	t.Run("L2 with CIDR and range syntax, IPv4 and IPv6; both go with the class", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		v4, v6 := mt.FreshRange()
		base := strings.TrimSuffix(v4, "0/28")
		span := base + "100-" + base + "110"
		c := b.Class(name, mt.Provisioner, b.Parameters(`{"addresses": ["`+v4+`", "`+span+`", "`+v6+`"],
			"advertisement": {"l2": {"interfaces": ["eth0"]}}}`))
		mt.Kit.Make(t, g, c)
		g.Eventually(mt.Rendered("IPAddressPool", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
		pool := mt.Rendered("IPAddressPool", name)()
		g.Expect(strs(pool.Object, "spec", "addresses")).To(ConsistOf(v4, span, v6))
		g.Expect(boolean(pool.Object, "spec", "autoAssign")).To(BeFalse())
		g.Eventually(mt.Rendered("L2Advertisement", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
		adv := mt.Rendered("L2Advertisement", name)()
		g.Expect(strs(adv.Object, "spec", "ipAddressPools")).To(Equal([]string{params.PoolName(name)}))
		g.Expect(strs(adv.Object, "spec", "interfaces")).To(Equal([]string{"eth0"}))
		for _, o := range []*unstructured.Unstructured{pool, adv} {
			g.Expect(o.GetOwnerReferences()).To(ConsistOf(HaveField("Name", name)))
		}
		g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True Rendered"))

		g.Expect(mt.Client.Delete(context.Background(), c)).To(Succeed())
		g.Eventually(mt.Rendered("IPAddressPool", name), mt.Timeout, mt.Tick).Should(BeNil())
		g.Eventually(mt.Rendered("L2Advertisement", name), mt.Timeout, mt.Tick).Should(BeNil())
	})

	t.Run("BGP advertisement with its options; switching back to L2", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		v4, _ := mt.FreshRange()
		c := b.Class(name, mt.Provisioner, b.Parameters(`{"addresses": ["`+v4+`"],
			"advertisement": {"bgp": {"aggregationLength": 32, "localPref": 150, "communities": ["65535:65282"], "peers": ["peer-a"]}}}`))
		mt.Kit.Make(t, g, c)
		g.Eventually(mt.Rendered("BGPAdvertisement", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
		adv := mt.Rendered("BGPAdvertisement", name)()
		g.Expect(number(adv.Object, "spec", "localPref")).To(Equal(int64(150)))
		g.Expect(strs(adv.Object, "spec", "communities")).To(Equal([]string{"65535:65282"}))
		g.Expect(strs(adv.Object, "spec", "peers")).To(Equal([]string{"peer-a"}))
		g.Expect(mt.Rendered("L2Advertisement", name)()).To(BeNil())

		mt.SetParameters(g, name, `{"addresses": ["`+v4+`"]}`)
		g.Eventually(mt.Rendered("L2Advertisement", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
		g.Eventually(mt.Rendered("BGPAdvertisement", name), mt.Timeout, mt.Tick).Should(BeNil())
	})
}

func TestInvalidAndOverlappingParameters(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	good, goodV4, _ := mt.Class(t, g, false)

	cases := []struct{ name, params, reason, says string }{
		{"unknown field", `{"addresses": ["198.51.100.0/28"], "adresses": []}`, "InvalidParameters", "parameters.adresses: unknown field"},
		{"bad CIDR", `{"addresses": ["198.51.100.300/28"]}`, "InvalidParameters", `parameters.addresses[0]`},
		{"bad range", `{"addresses": ["198.51.100.9-198.51.100.1"]}`, "InvalidParameters", `parameters.addresses[0]`},
		{"overlapping another class's pool", `{"addresses": ["` + goodV4 + `"]}`, "OverlapsOtherPool", "IPAddressPool metallb-system/" + params.PoolName(good)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := testkit.Name(t)
			c := b.Class(name, mt.Provisioner, b.Parameters(tc.params))
			mt.Kit.Make(t, g, c)
			g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(And(HavePrefix("False "+tc.reason), ContainSubstring(tc.says)))
			g.Eventually(mt.Kit.EventsAbout(g, c, tc.reason), mt.Timeout, mt.Tick).Should(ContainElement(ContainSubstring(tc.says)))
			g.Consistently(mt.Rendered("IPAddressPool", name), 2*mt.Tick*10, mt.Tick).Should(BeNil(), "nothing is rendered")
		})
	}

	// A class whose problem changes gets an event for the new one too.
	t.Run("problem changes", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		c := b.Class(name, mt.Provisioner, b.Parameters(cases[1].params))
		mt.Kit.Make(t, g, c)
		g.Eventually(mt.Kit.EventsAbout(g, c, cases[1].reason), mt.Timeout, mt.Tick).Should(ContainElement(ContainSubstring(cases[1].says)))
		mt.SetParameters(g, name, cases[0].params)
		g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(ContainSubstring(cases[0].says))
		g.Eventually(mt.Kit.EventsAbout(g, c, cases[0].reason), mt.Timeout, mt.Tick).Should(ContainElement(ContainSubstring(cases[0].says)))
	})

	// The good class keeps working.
	ns := mt.Namespace(t)
	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(good)))
	g.Expect(mt.InRange(goodV4)(mt.BoundAddress(g, ns, "web").Address)).To(BeTrue())
}

// TestADualPinListsIPv4First: MetalLB's pin of a Dual claim's addresses
// lists the IPv4 address first (the contract proves the rest of a Dual
// claim's association).
func TestADualPinListsIPv4First(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, _, _ := mt.Class(t, g, true)
	mt.Kit.Create(g, b.Claim(ns, "dual", b.OfClass(class), b.Family(v1alpha1.Dual)))
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "dual"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	var ip4, ip6 string
	for _, a := range mt.Kit.Claim(g, ns, "dual").Status.Addresses {
		if strings.Contains(a.Address, ":") {
			ip6 = a.Address
		} else {
			ip4 = a.Address
		}
	}
	mt.Kit.Create(g, b.Service(ns, "both", b.ForClaim("dual"), b.DualStack()))
	g.Eventually(mt.IngressOf(g, ns, "both"), mt.Timeout, mt.Tick).Should(ConsistOf(ip4, ip6))
	g.Expect(mt.Kit.Service(g, ns, "both").Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", ip4+","+ip6), "IPv4 first")
}

func strs(obj map[string]any, path ...string) []string {
	v, _, _ := unstructured.NestedStringSlice(obj, path...)
	return v
}

func boolean(obj map[string]any, path ...string) bool {
	v, _, _ := unstructured.NestedBool(obj, path...)
	return v
}

func number(obj map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(obj, path...)
	return v
}

// TestShrinkingAClassKeepsItsAddresses: what MetalLB makes of a class
// moved to other ranges (the contract's "a class moved to other ranges
// keeps its addresses" checks the rest): its pool keeps the address as a
// /32 beside the new range, a placeholder still holds it, and
// avoidBuggyIPs, which only the old parameters set, leaves the count.
func TestShrinkingAClassKeepsItsAddresses(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	_, class, _, addr := mt.ClaimedAndHeld(t, g)
	other, _ := mt.FreshRange()
	g.Eventually(totals(g, class), mt.Timeout, mt.Tick).Should(Equal("capacity 15, used 1, available 14"),
		"a /28 without its .0 (avoidBuggyIPs), one address used")

	mt.SetParameters(g, class, `{"addresses": ["`+other+`"]}`)

	g.Eventually(totals(g, class), mt.Timeout, mt.Tick).Should(Equal("capacity 16, used 1, available 16"),
		"a whole /28 now (no avoidBuggyIPs), and the address kept outside it takes nothing from it")
	g.Eventually(func() []string { return strs(mt.Rendered("IPAddressPool", class)().Object, "spec", "addresses") }, mt.Timeout, mt.Tick).
		Should(ConsistOf(other, addr.Address+"/32"))
	mt.HeldByPlaceholder(g, addr.Address)
}

// totals reads the totals of a class's status.capacity, used and available.
func totals(g Gomega, class string) func() string {
	return func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(mt.Client.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		total := func(n *v1alpha1.AddressCounts) string {
			if n == nil {
				return "none"
			}
			return strconv.FormatInt(n.Total, 10)
		}
		return fmt.Sprintf("capacity %s, used %s, available %s", total(c.Status.Capacity), total(c.Status.Used), total(c.Status.Available))
	}
}
