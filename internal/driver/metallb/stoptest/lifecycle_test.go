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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// The driver's cache can show a claim Bound to the address an allocation
// placeholder reserved before it shows the IPAddress itself (two watches,
// two orders). That placeholder is the hold to be: deleting it as an
// orphan left the address free in MetalLB until a new hold got it (58 of
// 10,000 claims in a benchmark run, each offered to another claim's
// placeholder meanwhile). The test builds what the cache showed: the claim
// Bound, listing an address the driver cannot see.
func TestAPlaceholderWhoseClaimListsItsAddressIsKept(t *testing.T) {
	g := NewWithT(t)
	v4, _ := mt.FreshRange()
	claim, addr := boundWithCoreStopped(t, g, v4, strings.TrimSuffix(v4, "0/28")+"5")
	a := mt.Kit.Address(g, addr.Name)
	a.Finalizers = nil
	g.Expect(mt.Client.Update(context.Background(), a)).To(Succeed())
	g.Expect(mt.Client.Delete(context.Background(), a)).To(Succeed())
	g.Eventually(mt.Kit.Gone(a), mt.Timeout, mt.Tick).Should(BeTrue())

	ph := mt.AllocationPlaceholder(claim, claim.ClassName())
	ph.Annotations[placeholder.AnnotationAddressName] = addr.Name
	mt.Kit.Create(g, ph)
	t.Cleanup(func() { _ = mt.Client.Delete(context.Background(), ph) })

	passes := reconciles(g, "placeholder")
	before := passes()
	mt.StartDriver(t)
	g.Eventually(passes, mt.Timeout, mt.Tick).Should(BeNumerically(">", before), "the new driver looked at the placeholder")
	g.Consistently(mt.Kit.Gone(ph), 5*time.Second, mt.Tick).Should(BeFalse(), "the hold to be is kept")
}

// The cache can also show the IPAddress the driver recorded before the pin
// of the placeholder it recorded it for, which came first: the placeholder
// carries MetalLB's assignment but not yet the name of its IPAddress (one
// in a 10,000-claim benchmark run, deleted as its claim's second address).
// The test builds that: the claim Bound to the address MetalLB assigned to
// an allocation placeholder that names no IPAddress.
func TestAPlaceholderAssignedItsClaimsAddressIsKept(t *testing.T) {
	g := NewWithT(t)
	v4, _ := mt.FreshRange()
	only := strings.TrimSuffix(v4, "0/28") + "5"
	claim, addr := boundWithCoreStopped(t, g, only+"/32", only)

	ph := mt.AllocationPlaceholder(claim, claim.ClassName())
	mt.Kit.Create(g, ph)
	t.Cleanup(func() { _ = mt.Client.Delete(context.Background(), ph) })
	g.Eventually(mt.IngressOf(g, mt.PlaceholderNS, ph.Name), mt.Timeout, mt.Tick).Should(Equal([]string{only}),
		"MetalLB assigns the class's only address, the claim's, to the placeholder")
	g.Expect(mt.Kit.Address(g, addr.Name).Spec.ClaimRef.UID).To(Equal(claim.UID))

	mt.StartDriver(t)
	g.Eventually(driverSeries(g, "metallb_iad_metallb_ready"), mt.Timeout, mt.Tick).Should(Equal(1.0),
		"the driver's gate is open (it asked to make the address's hold), so it could delete the placeholder")
	g.Eventually(func() string {
		return mt.Kit.Service(g, mt.PlaceholderNS, ph.Name).Annotations[placeholder.AnnotationAddressName]
	}, mt.Timeout, mt.Tick).
		Should(Equal(addr.Name), "pinned to the claim's address, for its hold to adopt it")
	g.Consistently(mt.Kit.Gone(ph), 5*time.Second, mt.Tick).Should(BeFalse(), "the hold to be is kept")
}

// boundWithCoreStopped creates a class of addresses (a MetalLB range),
// rendered by a driver that then stops, and a claim of it Bound to ip by a
// pre-bound IPAddress, then stops the core: no hold exists, and nothing
// changes the binding while the test's driver runs alone.
func boundWithCoreStopped(t *testing.T, g Gomega, addresses, ip string) (*v1alpha1.IPAddressClaim, *v1alpha1.IPAddress) {
	ns := mt.Namespace(t)
	name := testkit.Name(t)
	renderer := mt.StartDriver(t)
	mt.Kit.Make(t, g, b.Class(name, mt.Provisioner, b.Parameters(`{"addresses": ["`+addresses+`"]}`)))
	g.Eventually(mt.Rendered("IPAddressPool", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
	renderer.Stop()
	core := mt.StartCore(t)
	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(name)))
	g.Eventually(func() string { return mt.Kit.Claim(g, ns, "web").Annotations[v1alpha1.AnnotationProvisioner] }, mt.Timeout, mt.Tick).
		Should(Equal(mt.Provisioner))
	addr := b.Address("ip-"+mt.Dashed(ip), ip, name, b.PreBound(ns, "web"))
	mt.Kit.Create(g, addr)
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	core.Stop()
	claim := mt.Kit.Claim(g, ns, "web")
	g.Expect(claim.Status.Addresses).To(ConsistOf(HaveField("Name", addr.Name)), "the claim lists the address")
	return claim, addr
}

func TestALedgerAddressOfferedToAPlaceholderIsGivenBack(t *testing.T) {
	mt.StartCore(t)
	driver := mt.StartDriver(t)
	g := NewWithT(t)
	ns := mt.Namespace(t)
	name := testkit.Name(t)
	v4, _ := mt.FreshRange()
	only := strings.TrimSuffix(v4, "0/28") + "5"
	mt.Kit.Make(t, g, b.Class(name, mt.Provisioner, b.Parameters(`{"addresses": ["`+only+`/32"]}`)))
	g.Eventually(mt.Rendered("IPAddressPool", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
	driver.Stop()

	// The ledger has the class's only address, bound to "other", and MetalLB
	// has no hold for it (the driver is not running).
	other := b.Claim(ns, "other", b.OfClass(name))
	mt.Kit.Create(g, other)
	g.Eventually(func() []string { return mt.Kit.Finalizers(g, other) }, mt.Timeout, mt.Tick).Should(ContainElement(v1alpha1.FinalizerClaimProtection))
	mt.Kit.Make(t, g, b.Address("ip-"+mt.Dashed(only), only, name, b.PreBound(ns, "other")))
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "other"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

	// MetalLB hands the same address to web's allocation placeholder.
	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(name)))
	g.Eventually(func() string { return mt.Kit.Claim(g, ns, "web").Annotations[v1alpha1.AnnotationProvisioner] }, mt.Timeout, mt.Tick).
		Should(Equal(mt.Provisioner))
	claim := mt.Kit.Claim(g, ns, "web")
	ph := mt.AllocationPlaceholder(claim, name)
	mt.Kit.Create(g, ph)
	g.Eventually(mt.IngressOf(g, mt.PlaceholderNS, ph.Name), mt.Timeout, mt.Tick).Should(Equal([]string{only}))

	// The placeholder gives the address back to its rightful holder (a hold
	// for "other") and waits; nobody fights over the binding.
	mt.StartDriver(t)
	g.Eventually(mt.Kit.EventsAbout(g, claim, v1alpha1.EventYielded), mt.Timeout, mt.Tick).Should(
		ContainElement(ContainSubstring("of claim " + ns + "/other")))
	g.Eventually(mt.Holders(g, only), mt.Timeout, mt.Tick).Should(ConsistOf(mt.PlaceholderNS + "/hold-ip-" + mt.Dashed(only)))
	g.Consistently(func() string { return mt.Kit.Address(g, "ip-"+mt.Dashed(only)).Spec.ClaimRef.Name }, time.Second, mt.Tick).Should(Equal("other"))
	g.Expect(mt.Kit.Claim(g, ns, "web").Status.Phase).To(Equal(v1alpha1.ClaimPending))
	g.Expect(mt.Kit.Service(g, mt.PlaceholderNS, ph.Name).UID).NotTo(BeEmpty(), "the placeholder waits, it is not deleted")
	g.Expect(mt.Kit.EventsAbout(g, claim, v1alpha1.EventLedgerMismatch)()).To(BeEmpty())
}
