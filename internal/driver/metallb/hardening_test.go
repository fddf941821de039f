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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestADuplicateSettlesInOnePhase: an admin creates a second IPAddress for
// an IP the driver recorded. The core says Pending (Duplicate); the driver
// holds nothing for it and reports no conflict, and nobody rewrites it.
func TestADuplicateSettlesInOnePhase(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, class, _, addr := claimedAndHeld(t, g)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have second precision
	dup := b.Address("zz-"+addr.Name, addr.Address, class)
	kit.Create(g, dup)

	g.Eventually(kit.StateOfAddress(g, dup.Name), timeout, tick).Should(Equal(
		testkit.AddressState{Phase: v1alpha1.AddressPending, Reason: v1alpha1.ReasonDuplicate}))
	settled := kit.Address(g, dup.Name).ResourceVersion
	g.Consistently(func() string { return kit.Address(g, dup.Name).ResourceVersion }, 3*time.Second, tick).Should(Equal(settled),
		"nobody rewrites a settled duplicate")
	g.Expect(placeholders(g, dup.Name)()).To(BeEmpty(), "no hold of its own")
	g.Expect(kit.EventsAbout(g, kit.Address(g, dup.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty())
	g.Expect(testkit.Condition(kit.Address(g, dup.Name).Status.Conditions, v1alpha1.ConditionHeld).Reason).To(Equal(v1alpha1.ReasonDuplicate))
	g.Expect(kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	heldByPlaceholder(g, addr.Address)
}

// allocationsOf lists the allocation placeholders of a claim.
func allocationsOf(g Gomega, claim *v1alpha1.IPAddressClaim) func() []string {
	return func() []string {
		list := &corev1.ServiceList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(placeholderNS),
			client.MatchingLabels{v1alpha1.LabelClaimUID: string(claim.UID), v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation})).To(Succeed())
		var out []string
		for _, s := range list.Items {
			if s.DeletionTimestamp == nil {
				out = append(out, s.Name+"@"+s.Labels[v1alpha1.LabelClass])
			}
		}
		return out
	}
}

// TestAnAllocationNothingNeedsGoes: while MetalLB is down, a claim asks the
// driver for an address and is then bound to a static address of its class
// by the core. Its allocation placeholder goes, so that MetalLB, back, gives
// no address to a placeholder the ledger would never record.
func TestAnAllocationNothingNeedsGoes(t *testing.T) {
	startCore(t)
	startTrustingDriver(t, driver.HandoffAuto)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class, v4, _ := metallbClass(t, g, false)
	g.Expect(testCluster.StopMetalLB()).To(Succeed())
	t.Cleanup(restartMetalLB)

	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	claim := kit.Claim(g, ns, "web")
	g.Eventually(allocationsOf(g, claim), timeout, tick).Should(HaveLen(1))

	static := strings.TrimSuffix(v4, "0/28") + "9"
	kit.Create(g, b.Address(class+"-static", static, class))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(allocationsOf(g, claim), timeout, tick).Should(BeEmpty(), "the allocation goes once the claim is bound")

	g.Expect(testCluster.StartMetalLB()).To(Succeed())
	heldByPlaceholder(g, static)
	g.Consistently(func() []string {
		list := &corev1.ServiceList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(placeholderNS))).To(Succeed())
		var unrecorded []string
		for _, s := range list.Items {
			for _, in := range s.Status.LoadBalancer.Ingress {
				if strings.HasPrefix(in.IP, strings.TrimSuffix(v4, "0/28")) && in.IP != static {
					unrecorded = append(unrecorded, s.Name+"="+in.IP)
				}
			}
		}
		return unrecorded
	}, 2*time.Second, tick).Should(BeEmpty(), "no placeholder holds an address the ledger does not record")
}

// TestRetargetingAPendingClaim: a claim waiting on an exhausted class is
// moved to another class; the old request is withdrawn and the new class
// provisions it.
func TestRetargetingAPendingClaim(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	full := testkit.Name(t) + "-full"
	v4, _ := freshRange()
	one := strings.TrimSuffix(v4, "0/28") + "1"
	kit.Create(g, b.Class(full, provisioner, b.Parameters(fmt.Sprintf(`{"addresses": ["%s-%s"]}`, one, one))))
	kit.Create(g, b.Claim(ns, "first", b.OfClass(full)))
	boundAddress(g, ns, "first")

	kit.Create(g, b.Claim(ns, "web", b.OfClass(full)))
	claim := kit.Claim(g, ns, "web")
	g.Eventually(allocationsOf(g, claim), timeout, tick).Should(ConsistOf("alloc-" + string(claim.UID) + "-v4@" + full))
	// The driver makes the allocation without waiting for the core's first
	// status, so the claim's reason may still be empty here.
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Consistently(kit.StateOfClaim(g, ns, "web"), time.Second, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))

	other, otherV4, _ := metallbClass(t, g, false)
	g.Eventually(func() error {
		c := kit.Claim(g, ns, "web")
		c.Spec.ClassName = other
		return k8s.Update(context.Background(), c)
	}, timeout, tick).Should(Succeed())
	addr := boundAddress(g, ns, "web")
	g.Expect(inRange(otherV4)(addr.Address)).To(BeTrue(), "provisioned from the new class")
	g.Expect(kit.Address(g, addr.Name).Spec.ClassName).To(Equal(other))
	heldByPlaceholder(g, addr.Address)
}

// TestTheDriverWritesAnAddressStatusAfterTheCore: the driver holds a new
// address at once, but writes its conditions only after the core's first
// pass has written the address's phase; both writing a new address's status
// at the same moment, one of the two writes would be refused.
func TestTheDriverWritesAnAddressStatusAfterTheCore(t *testing.T) {
	startDriver(t)
	g := NewWithT(t)
	class, v4, _ := metallbClass(t, g, false)
	ip := netip.MustParsePrefix(v4).Addr().Next()
	name := "ip-" + dashed(ip.String())
	kit.Create(g, b.Address(name, ip.String(), class))
	heldByPlaceholder(g, ip.String())
	g.Consistently(func() []metav1.Condition { return kit.Address(g, name).Status.Conditions }, 2*time.Second, tick).
		Should(BeEmpty(), "no status before the core's")

	startCore(t)
	g.Eventually(kit.StateOfAddress(g, name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	g.Eventually(func() string { return testkit.Reason(kit.Address(g, name).Status.Conditions, v1alpha1.ConditionHeld) }, timeout, tick).
		Should(Equal(driver.ReasonHeld))
}
