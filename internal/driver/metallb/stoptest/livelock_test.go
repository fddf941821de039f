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

package stoptest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestARefusedPinWinsOverAPendingClaim builds the loop of a restart: a
// Service pinned (gap handoff) to its claim's address, refused by MetalLB
// because an allocation placeholder of a Pending claim of the same class
// was given that address first. The placeholder must give the address back
// without being deleted (a replacement would be offered the same address),
// the Service must get it, and the Pending claim another one.
func TestARefusedPinWinsOverAPendingClaim(t *testing.T) {
	drv, g, ns := startTrusting(t, driver.HandoffGap)
	ctx := context.Background()

	// Three addresses: x and z take the first two.
	name, base := fewAddresses(t, g, 3)
	mt.Kit.Create(g, b.Claim(ns, "x", b.OfClass(name)))
	first := mt.BoundAddress(g, ns, "x")
	g.Expect(first.Address).To(Equal(base + "1"))
	mt.Kit.Create(g, b.Claim(ns, "z", b.OfClass(name)))
	g.Expect(mt.BoundAddress(g, ns, "z").Address).To(Equal(base + "2"))
	mt.HeldByPlaceholder(g, first.Address)

	// With MetalLB down: claim y asks for an address, and Service s is
	// pinned to x's address once its hold is gone.
	y, alloc := pendingWithMetalLBDown(t, g, ns, name, "y")
	mt.Kit.Create(g, b.Service(ns, "s", b.ForClaim("x")))
	g.Eventually(func() string { return mt.Kit.Service(g, ns, "s").Annotations["metallb.io/loadBalancerIPs"] }, mt.Timeout, mt.Tick).
		Should(Equal(first.Address))
	drv.Stop()

	// MetalLB comes back having given x's address to y's placeholder: it
	// processes Services that report an address first.
	ph := offer(g, alloc, first.Address)
	g.Expect(mt.Cluster.StartMetalLB()).To(Succeed())
	g.Eventually(func() []string {
		var reasons []string
		list := &corev1.EventList{}
		g.Expect(mt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "s" {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}, mt.Timeout, mt.Tick).Should(ContainElement("AllocationFailed"), "MetalLB refuses the pin")
	g.Expect(mt.IngressOf(g, mt.PlaceholderNS, alloc)()).To(Equal([]string{first.Address}))

	mt.StartDriverWith(t, driver.HandoffGap)
	g.Eventually(mt.IngressOf(g, ns, "s"), mt.Timeout, mt.Tick).Should(Equal([]string{first.Address}), "the rightful holder gets the address")
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "y"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(mt.Kit.Claim(g, ns, "y").Status.Addresses[0].Address).To(Equal(base + "3"))
	g.Expect(mt.Kit.Service(g, mt.PlaceholderNS, alloc).UID).To(Equal(ph.UID),
		"the placeholder gave the address back instead of being deleted and asking again")
	g.Eventually(mt.Kit.EventsAbout(g, y, v1alpha1.EventYielded), mt.Timeout, mt.Tick).ShouldNot(BeEmpty())
	g.Expect(mt.Kit.EventsAbout(g, y, v1alpha1.EventLedgerMismatch)()).To(BeEmpty())
	g.Expect(mt.Kit.StateOfAddress(g, first.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	g.Consistently(mt.IngressOf(g, ns, "s"), time.Second, mt.Tick).Should(Equal([]string{first.Address}))
}

// TestAYieldedAddressIsAskedForAgainOnlyOnceMetalLBTookItBack: an allocation
// placeholder that gave back an address its status still reports (MetalLB
// is down, so nothing took it back) stays withdrawn, though the address's
// hold reports it too. Let go, it would be a second Service reporting the
// address without a sharing key, and a restarted MetalLB, which processes
// first the Services that report an address in no order among them, could
// give it the address and refuse the hold.
func TestAYieldedAddressIsAskedForAgainOnlyOnceMetalLBTookItBack(t *testing.T) {
	_, g, ns := startTrusting(t, driver.HandoffGap)

	name, base := fewAddresses(t, g, 2)
	mt.Kit.Create(g, b.Claim(ns, "x", b.OfClass(name)))
	taken := mt.BoundAddress(g, ns, "x")
	mt.HeldByPlaceholder(g, taken.Address)

	// With MetalLB down, claim y's allocation placeholder is offered x's
	// address, as by a MetalLB that processed it before x's hold.
	y, alloc := pendingWithMetalLBDown(t, g, ns, name, "y")
	ph := offer(g, alloc, taken.Address)
	withdrawn := func() string { return mt.Kit.Service(g, mt.PlaceholderNS, alloc).Labels[v1alpha1.LabelWithdrawn] }
	g.Eventually(withdrawn, mt.Timeout, mt.Tick).ShouldNot(BeEmpty(), "the placeholder gives the address back")
	g.Eventually(mt.Kit.EventsAbout(g, y, v1alpha1.EventYielded), mt.Timeout, mt.Tick).ShouldNot(BeEmpty())
	g.Expect(mt.IngressOf(g, mt.PlaceholderNS, alloc)()).To(Equal([]string{taken.Address}))
	g.Expect(mt.Holders(g, taken.Address)()).To(HaveLen(2), "x's hold reports the address too")
	g.Consistently(withdrawn, 3*time.Second, mt.Tick).ShouldNot(BeEmpty(),
		"while its status reports the address, the placeholder stays withdrawn")

	// MetalLB, back, takes the address from the withdrawn placeholder and
	// keeps it for x's hold; the placeholder asks again and gets the other.
	g.Expect(mt.Cluster.StartMetalLB()).To(Succeed())
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "y"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(mt.Kit.Claim(g, ns, "y").Status.Addresses[0].Address).To(Equal(base + "2"))
	g.Expect(withdrawn()).To(BeEmpty())
	g.Expect(mt.Kit.Service(g, mt.PlaceholderNS, alloc).UID).To(Equal(ph.UID), "the placeholder asked again instead of being deleted")
	g.Expect(mt.Holders(g, taken.Address)()).To(HaveLen(1))
	mt.HeldByPlaceholder(g, taken.Address)
	g.Expect(mt.Kit.StateOfAddress(g, taken.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(mt.Kit.EventsAbout(g, y, v1alpha1.EventLedgerMismatch)()).To(BeEmpty())
}

// pendingWithMetalLBDown stops MetalLB (it starts again when the test
// ends) and creates claim name of class, which stays Pending once the
// driver has made its allocation placeholder; it returns the claim and the
// placeholder's name.
func pendingWithMetalLBDown(t *testing.T, g Gomega, ns, class, name string) (*v1alpha1.IPAddressClaim, string) {
	g.Expect(mt.Cluster.StopMetalLB()).To(Succeed())
	t.Cleanup(restartMetalLB)
	mt.Kit.Create(g, b.Claim(ns, name, b.OfClass(class)))
	claim := mt.Kit.Claim(g, ns, name)
	g.Eventually(mt.AllocationsOf(g, claim), mt.Timeout, mt.Tick).Should(HaveLen(1))
	return claim, "alloc-" + string(claim.UID) + "-v4"
}

// offer writes ip into the status of placeholder alloc, as a MetalLB that
// processed it before the address's rightful holder would.
func offer(g Gomega, alloc, ip string) *corev1.Service {
	ph := mt.Kit.Service(g, mt.PlaceholderNS, alloc)
	ph.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	g.Expect(mt.Client.Status().Update(context.Background(), ph)).To(Succeed())
	return ph
}

// fewAddresses makes a class of the MetalLB driver with the first n
// addresses of a fresh range, and returns its name and what the addresses
// begin with ("198.18.3." for 198.18.3.1 to 198.18.3.n).
func fewAddresses(t *testing.T, g Gomega, n int) (class, base string) {
	class = testkit.Name(t)
	v4, _ := mt.FreshRange()
	base = strings.TrimSuffix(v4, "0/28")
	mt.Kit.Make(t, g, b.Class(class, mt.Provisioner, b.Parameters(fmt.Sprintf(`{"addresses": ["%s1-%s%d"]}`, base, base, n))))
	return class, base
}
