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
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/ipaddr"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestPreBoundAddressesOutsideAnExhaustedRange: an admin pre-binds
// addresses outside their class's range, one after another, as
// docs/operating.md says ("Adopting an address a Service already holds"),
// while the class is exhausted and claims of it wait. The pool keeps each
// address as a /32, which MetalLB may offer to a waiting claim's allocation
// placeholder before the address's hold; the placeholder gives it back.
// Each pre-bound claim is Bound and its address held, nothing is recorded
// for a waiting claim, a Service naming a pre-bound claim gets its address,
// and the first address of the range to free up goes to a waiting claim.
//
// The driver's first conditions on each address race the claim's pass that
// accepts the pre-binding (both follow the core's first status write), and
// the yields and the late hold of an address outside the range add writes.
// Until a binding refused for a newer version was tried again
// (TestARefusedBindingIsTriedAgain in internal/core), a claim stayed
// Pending ("Waiting for IPAddress …: it is Pending") in some round of half
// the runs.
func TestPreBoundAddressesOutsideAnExhaustedRange(t *testing.T) {
	g := NewWithT(t)
	mt.StartBoth(t)
	ns := mt.Namespace(t)
	class, v4, outside := smallClass(t, g)

	for i := range 4 {
		mt.Kit.Create(g, b.Claim(ns, fmt.Sprintf("fill-%d", i), b.OfClass(class)))
	}
	for i := range 4 {
		mt.BoundAddress(g, ns, fmt.Sprintf("fill-%d", i))
	}
	waiting := make([]*v1alpha1.IPAddressClaim, 0, 3)
	for i := range 3 {
		mt.Kit.Create(g, b.Claim(ns, fmt.Sprintf("waiting-%d", i), b.OfClass(class)))
	}
	for i := range 3 {
		name := fmt.Sprintf("waiting-%d", i)
		g.Eventually(mt.Kit.StateOfClaim(g, ns, name), mt.Timeout, mt.Tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
		w := mt.Kit.Claim(g, ns, name)
		g.Eventually(mt.AllocationsOf(g, w), mt.Timeout, mt.Tick).Should(HaveLen(1), "%s asks MetalLB", name)
		waiting = append(waiting, w)
	}

	ips := outsideAddresses(outside, testkit.Rounds(8, 14))
	watch := mt.WatchIPs(t, g, texts(ips)...)
	for i, ip := range ips {
		// The claim first: an address pre-bound to a claim the core has not
		// seen is reclaimed at once.
		claim := fmt.Sprintf("web-%d", i)
		mt.Kit.Create(g, b.Claim(ns, claim, b.OfClass(class), b.Named(ipaddr.ObjectName(ip))))
		g.Eventually(mt.Kit.StateOfClaim(g, ns, claim), mt.Timeout, mt.Tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
		mt.Kit.Make(t, g, b.Address(ipaddr.ObjectName(ip), ip.String(), class, b.PreBound(ns, claim), b.Reclaim(v1alpha1.ReclaimRetain)))
		boundAndHeld(g, ns, claim, ip)
	}
	g.Eventually(mt.ClassCondition(g, class), mt.Timeout, mt.Tick).Should(HaveSuffix("kept: " + strings.Join(texts(ips), ", ")))
	g.Consistently(func(g Gomega) {
		for _, w := range waiting {
			g.Expect(mt.Kit.StateOfClaim(g, ns, w.Name)()).To(HaveField("Phase", v1alpha1.ClaimPending))
			g.Expect(recordedFor(g, w)).To(BeEmpty(), "nothing is recorded for %s", w.Name)
		}
		for i := range ips {
			g.Expect(mt.Kit.StateOfClaim(g, ns, fmt.Sprintf("web-%d", i))()).To(HaveField("Phase", v1alpha1.ClaimBound))
		}
	}, 3*time.Second, mt.Tick).Should(Succeed())
	offered := 0
	for _, w := range waiting {
		offered += watch.Took(mt.PlaceholderNS, "alloc-"+string(w.UID)+"-v4")
	}
	t.Logf("MetalLB offered the kept addresses to the waiting claims' allocation placeholders %d times", offered)

	mt.Kit.Create(g, b.Service(ns, "svc", b.ForClaim("web-0")))
	g.Eventually(mt.IngressOf(g, ns, "svc"), mt.Timeout, mt.Tick).Should(Equal([]string{ips[0].String()}))

	freed := mt.BoundAddress(g, ns, "fill-0")
	g.Expect(mt.Client.Delete(context.Background(), mt.Kit.Claim(g, ns, "fill-0"))).To(Succeed())
	g.Eventually(func(g Gomega) []string {
		out := make([]string, 0, len(waiting))
		for _, w := range waiting {
			out = append(out, recordedFor(g, w)...)
		}
		return out
	}, mt.Timeout, mt.Tick).Should(Equal([]string{freed.Name}), "a waiting claim gets %s, the address of %s that freed up", freed.Address, v4)
}

// smallClass creates a class over the first /30 of a fresh range (four
// addresses), reclaiming by Delete, waits until it is rendered, and returns
// its name, its range and another fresh range, outside every class's.
func smallClass(t *testing.T, g Gomega) (class string, v4, outside netip.Prefix) {
	class = testkit.Name(t)
	fresh, _ := mt.FreshRange()
	v4 = netip.PrefixFrom(netip.MustParsePrefix(fresh).Addr(), 30)
	other, _ := mt.FreshRange()
	mt.Kit.Make(t, g, b.Class(class, mt.Provisioner, b.ClassReclaim(v1alpha1.ReclaimDelete),
		b.Parameters(fmt.Sprintf(`{"addresses": [%q]}`, v4))))
	g.Eventually(mt.ClassCondition(g, class), mt.Timeout, mt.Tick).Should(HavePrefix("True Rendered"))
	return class, v4, netip.MustParsePrefix(other)
}

// outsideAddresses are the first n addresses of p after its first.
func outsideAddresses(p netip.Prefix, n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i, ip := 0, p.Addr(); i < n; i++ {
		ip = ip.Next()
		out[i] = ip
	}
	return out
}

// boundAndHeld waits until the claim is Bound to ip's IPAddress, the
// address is Bound and Held, and its hold alone reports it.
func boundAndHeld(g Gomega, ns, claim string, ip netip.Addr) {
	name := ipaddr.ObjectName(ip)
	g.Eventually(mt.Kit.StateOfClaim(g, ns, claim), mt.Timeout, mt.Tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{name}}), "claim %s accepts %s", claim, name)
	g.Eventually(mt.Kit.StateOfAddress(g, name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	g.Eventually(mt.Kit.AddressReason(g, name, v1alpha1.ConditionHeld), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonHeld))
	g.Eventually(mt.Holders(g, ip.String()), mt.Timeout, mt.Tick).Should(Equal([]string{mt.PlaceholderNS + "/hold-" + name}))
}

// recordedFor lists the IPAddresses bound to claim, by its UID.
func recordedFor(g Gomega, claim *v1alpha1.IPAddressClaim) []string {
	list := &v1alpha1.IPAddressList{}
	g.Expect(mt.Client.List(context.Background(), list)).To(Succeed())
	var out []string
	for _, a := range list.Items {
		if ref := a.Spec.ClaimRef; ref != nil && ref.UID == claim.UID {
			out = append(out, a.Name)
		}
	}
	return out
}

// texts writes addresses sorted as text, as a class's Rendered condition
// lists them.
func texts(ips []netip.Addr) []string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	slices.Sort(s)
	return s
}
