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

package metallb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

func classCondition(g Gomega, name string) func() string {
	return func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRendered)
		if cond == nil {
			return ""
		}
		return string(cond.Status) + " " + cond.Reason + ": " + cond.Message
	}
}

func TestClassRendersPoolAndAdvertisement(t *testing.T) {
	startDriver(t)

	t.Run("L2 with CIDR and range syntax, IPv4 and IPv6; both go with the class", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		v4, v6 := freshRange()
		base := strings.TrimSuffix(v4, "0/28")
		span := base + "100-" + base + "110"
		c := b.Class(name, provisioner, b.Parameters(`{"addresses": ["`+v4+`", "`+span+`", "`+v6+`"],
			"advertisement": {"l2": {"interfaces": ["eth0"]}}}`))
		kit.Create(g, c)
		g.Eventually(rendered(g, "IPAddressPool", name), timeout, tick).ShouldNot(BeNil())
		pool := rendered(g, "IPAddressPool", name)()
		g.Expect(strs(pool.Object, "spec", "addresses")).To(ConsistOf(v4, span, v6))
		g.Expect(boolean(pool.Object, "spec", "autoAssign")).To(BeFalse())
		g.Eventually(rendered(g, "L2Advertisement", name), timeout, tick).ShouldNot(BeNil())
		adv := rendered(g, "L2Advertisement", name)()
		g.Expect(strs(adv.Object, "spec", "ipAddressPools")).To(Equal([]string{params.PoolName(name)}))
		g.Expect(strs(adv.Object, "spec", "interfaces")).To(Equal([]string{"eth0"}))
		for _, o := range []*unstructured.Unstructured{pool, adv} {
			g.Expect(o.GetOwnerReferences()).To(ConsistOf(HaveField("Name", name)))
		}
		g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True Rendered"))

		g.Expect(k8s.Delete(context.Background(), c)).To(Succeed())
		g.Eventually(rendered(g, "IPAddressPool", name), timeout, tick).Should(BeNil())
		g.Eventually(rendered(g, "L2Advertisement", name), timeout, tick).Should(BeNil())
	})

	t.Run("BGP advertisement with its options; switching back to L2", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		v4, _ := freshRange()
		c := b.Class(name, provisioner, b.Parameters(`{"addresses": ["`+v4+`"],
			"advertisement": {"bgp": {"aggregationLength": 32, "localPref": 150, "communities": ["65535:65282"], "peers": ["peer-a"]}}}`))
		kit.Create(g, c)
		g.Eventually(rendered(g, "BGPAdvertisement", name), timeout, tick).ShouldNot(BeNil())
		adv := rendered(g, "BGPAdvertisement", name)()
		g.Expect(number(adv.Object, "spec", "localPref")).To(Equal(int64(150)))
		g.Expect(strs(adv.Object, "spec", "communities")).To(Equal([]string{"65535:65282"}))
		g.Expect(strs(adv.Object, "spec", "peers")).To(Equal([]string{"peer-a"}))
		g.Expect(rendered(g, "L2Advertisement", name)()).To(BeNil())

		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		c.Spec.Parameters = b.Class("", "", b.Parameters(`{"addresses": ["`+v4+`"]}`)).Spec.Parameters
		g.Expect(k8s.Update(context.Background(), c)).To(Succeed())
		g.Eventually(rendered(g, "L2Advertisement", name), timeout, tick).ShouldNot(BeNil())
		g.Eventually(rendered(g, "BGPAdvertisement", name), timeout, tick).Should(BeNil())
	})
}

func TestInvalidAndOverlappingParameters(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	good, goodV4, _ := metallbClass(t, g, false)

	cases := []struct{ name, params, reason, says string }{
		{"unknown field", `{"addresses": ["10.99.0.0/28"], "adresses": []}`, "InvalidParameters", "parameters.adresses: unknown field"},
		{"bad CIDR", `{"addresses": ["10.99.0.300/28"]}`, "InvalidParameters", `parameters.addresses[0]`},
		{"bad range", `{"addresses": ["10.99.0.9-10.99.0.1"]}`, "InvalidParameters", `parameters.addresses[0]`},
		{"overlapping another class's pool", `{"addresses": ["` + goodV4 + `"]}`, "OverlapsOtherPool", "IPAddressPool metallb-system/" + params.PoolName(good)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := testkit.Name(t)
			c := b.Class(name, provisioner, b.Parameters(tc.params))
			kit.Create(g, c)
			g.Eventually(classCondition(g, name), timeout, tick).Should(And(HavePrefix("False "+tc.reason), ContainSubstring(tc.says)))
			g.Eventually(kit.EventsAbout(g, c, tc.reason), timeout, tick).Should(ContainElement(ContainSubstring(tc.says)))
			g.Consistently(rendered(g, "IPAddressPool", name), 2*tick*10, tick).Should(BeNil(), "nothing is rendered")
		})
	}

	// A class whose problem changes gets an event for the new one too.
	t.Run("problem changes", func(t *testing.T) {
		g := NewWithT(t)
		name := testkit.Name(t)
		c := b.Class(name, provisioner, b.Parameters(cases[1].params))
		kit.Create(g, c)
		g.Eventually(kit.EventsAbout(g, c, cases[1].reason), timeout, tick).Should(ContainElement(ContainSubstring(cases[1].says)))
		g.Expect(kit.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		c.Spec.Parameters = b.Class("", "", b.Parameters(cases[0].params)).Spec.Parameters
		g.Expect(kit.Update(context.Background(), c)).To(Succeed())
		g.Eventually(classCondition(g, name), timeout, tick).Should(ContainSubstring(cases[0].says))
		g.Eventually(kit.EventsAbout(g, c, cases[0].reason), timeout, tick).Should(ContainElement(ContainSubstring(cases[0].says)))
	})

	// The good class keeps working.
	ns := kit.Namespace(t)
	kit.Create(g, b.Claim(ns, "web", b.OfClass(good)))
	g.Expect(inRange(goodV4)(boundAddress(g, ns, "web").Address)).To(BeTrue())
}

// TestFlagshipFlow: claim → Bound and held → attach to A → delete A → held
// again, still Bound → attach to B, same address.
func TestFlagshipFlow(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class, v4, _ := metallbClass(t, g, false)

	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	addr := boundAddress(g, ns, "web")
	g.Expect(inRange(v4)(addr.Address)).To(BeTrue())
	heldByPlaceholder(g, addr.Address)
	a := kit.Address(g, addr.Name)
	g.Expect(a.Spec.Source.FromClass).NotTo(BeNil())
	g.Expect(a.Finalizers).To(ContainElement(v1alpha1.DriverTeardownFinalizer(provisioner)))
	g.Eventually(func() string {
		return testkit.Reason(kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionHeld)
	},
		timeout, tick).Should(Equal("Held"))

	kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
	g.Eventually(placeholders(g, addr.Name), timeout, tick).Should(BeEmpty())
	g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, addr.Name).Status.AssociatedTo },
		timeout, tick).Should(HaveField("Name", "a"))
	svc := kit.Service(g, ns, "a")
	g.Expect(svc.Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", addr.Address))
	g.Expect(svc.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationPinnedBy, addr.Address))

	g.Expect(k8s.Delete(context.Background(), svc)).To(Succeed())
	heldByPlaceholder(g, addr.Address)
	g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, addr.Name).Status.AssociatedTo }, timeout, tick).Should(BeNil())
	g.Expect(kit.StateOfClaim(g, ns, "web")()).To(Equal(testkit.ClaimState{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound,
		Addresses: []string{addr.Name}}))

	kit.Create(g, b.Service(ns, "b", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "b"), timeout, tick).Should(Equal([]string{addr.Address}))
	g.Eventually(holders(g, addr.Address), timeout, tick).Should(Equal([]string{ns + "/b"}))
}

func TestPlainServiceNeverGetsAReservedAddress(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, _, _, _ := claimedAndHeld(t, g)
	kit.Create(g, b.Service(ns, "plain"))
	g.Consistently(ingressOf(g, ns, "plain"), 3*time.Second, tick).Should(BeEmpty())
}

func TestDualStack(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class, v4, v6 := metallbClass(t, g, true)
	kit.Create(g, b.Claim(ns, "dual", b.OfClass(class), b.Family(v1alpha1.Dual)))
	g.Eventually(kit.StateOfClaim(g, ns, "dual"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	as := kit.Claim(g, ns, "dual").Status.Addresses
	g.Expect(as).To(HaveLen(2))
	var ip4, ip6 string
	for _, a := range as {
		if strings.Contains(a.Address, ":") {
			ip6 = a.Address
		} else {
			ip4 = a.Address
		}
	}
	g.Expect(inRange(v4)(ip4)).To(BeTrue())
	g.Expect(inRange(v6)(ip6)).To(BeTrue())
	heldByPlaceholder(g, ip4)
	heldByPlaceholder(g, ip6)

	kit.Create(g, b.Service(ns, "both", b.ForClaim("dual"), b.DualStack()))
	g.Eventually(ingressOf(g, ns, "both"), timeout, tick).Should(ConsistOf(ip4, ip6))
	g.Expect(kit.Service(g, ns, "both").Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", ip4+","+ip6), "IPv4 first")

	// A single-stack Service cannot carry a Dual claim: refused, unchanged.
	kit.Create(g, b.Service(ns, "single", b.ForClaim("dual")))
	g.Eventually(kit.EventsAbout(g, kit.Service(g, ns, "single"), v1alpha1.EventAssociationRefused), timeout, tick).ShouldNot(BeEmpty())
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

func TestShrinkingAClassKeepsItsAddresses(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, class, _, addr := claimedAndHeld(t, g)
	other, _ := freshRange()

	c := &v1alpha1.IPAddressClass{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
	c.Spec.Parameters = b.Class("", "", b.Parameters(`{"addresses": ["`+other+`"]}`)).Spec.Parameters
	g.Expect(k8s.Update(context.Background(), c)).To(Succeed())

	g.Eventually(classCondition(g, class), timeout, tick).Should(And(HavePrefix("True AddressesOutsideRange"), ContainSubstring(addr.Address)))
	g.Expect(strs(rendered(g, "IPAddressPool", class)().Object, "spec", "addresses")).To(ConsistOf(other, addr.Address+"/32"))
	g.Consistently(kit.StateOfAddress(g, addr.Name), 2*time.Second, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	heldByPlaceholder(g, addr.Address)

	// Attaching it still works.
	kit.Create(g, b.Service(ns, "web", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "web"), timeout, tick).Should(Equal([]string{addr.Address}))
}
