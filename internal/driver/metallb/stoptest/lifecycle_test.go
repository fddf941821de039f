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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestALedgerAddressOfferedToAPlaceholderIsGivenBack: MetalLB offers an
// address the ledger records for another claim (its hold not made yet) to
// a claim's allocation placeholder. The placeholder yields it, waiting and
// not deleted, the rightful claim's hold gets it, and the binding stays.
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
