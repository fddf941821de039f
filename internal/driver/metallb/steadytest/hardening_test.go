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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestADuplicateSettlesInOnePhase: an admin creates a second IPAddress for
// an IP the driver recorded. The core says Pending (Duplicate); the driver
// holds nothing for it and reports no conflict, and nobody rewrites it.
func TestADuplicateSettlesInOnePhase(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns, class, _, addr := mt.ClaimedAndHeld(t, g)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have second precision
	dup := b.Address("zz-"+addr.Name, addr.Address, class)
	mt.Kit.Make(t, g, dup)

	g.Eventually(mt.Kit.StateOfAddress(g, dup.Name), mt.Timeout, mt.Tick).Should(Equal(
		testkit.AddressState{Phase: v1alpha1.AddressPending, Reason: v1alpha1.ReasonDuplicate}))
	// Settled once both writers said so: the core (the phase) and the
	// driver (Held), which may write a moment later.
	g.Eventually(func() string {
		return testkit.Condition(mt.Kit.Address(g, dup.Name).Status.Conditions, v1alpha1.ConditionHeld).Reason
	}, mt.Timeout, mt.Tick).Should(Equal(v1alpha1.ReasonDuplicate))
	settled := mt.Kit.Address(g, dup.Name).ResourceVersion
	g.Consistently(func() string { return mt.Kit.Address(g, dup.Name).ResourceVersion }, 3*time.Second, mt.Tick).Should(Equal(settled),
		"nobody rewrites a settled duplicate")
	g.Expect(mt.Placeholders(g, dup.Name)()).To(BeEmpty(), "no hold of its own")
	g.Expect(mt.Kit.EventsAbout(g, mt.Kit.Address(g, dup.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty())
	g.Expect(testkit.Condition(mt.Kit.Address(g, dup.Name).Status.Conditions, v1alpha1.ConditionHeld).Reason).To(Equal(v1alpha1.ReasonDuplicate))
	g.Expect(mt.Kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	g.Expect(mt.Kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	mt.HeldByPlaceholder(g, addr.Address)
}

// TestRetargetingAPendingClaim: a claim waiting on an exhausted class is
// moved to another class; the old request is withdrawn and the new class
// provisions it.
func TestRetargetingAPendingClaim(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	full := testkit.Name(t) + "-full"
	v4, _ := mt.FreshRange()
	one := strings.TrimSuffix(v4, "0/28") + "1"
	mt.Kit.Make(t, g, b.Class(full, mt.Provisioner, b.Parameters(fmt.Sprintf(`{"addresses": ["%s-%s"]}`, one, one))))
	mt.Kit.Create(g, b.Claim(ns, "first", b.OfClass(full)))
	mt.BoundAddress(g, ns, "first")

	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(full)))
	claim := mt.Kit.Claim(g, ns, "web")
	g.Eventually(mt.AllocationsOf(g, claim), mt.Timeout, mt.Tick).Should(ConsistOf("alloc-" + string(claim.UID) + "-v4@" + full))
	// The driver makes the allocation without waiting for the core's first
	// status, so the claim's reason may still be empty here.
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Consistently(mt.Kit.StateOfClaim(g, ns, "web"), time.Second, mt.Tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))

	other, otherV4, _ := mt.Class(t, g, false)
	g.Eventually(func() error {
		c := mt.Kit.Claim(g, ns, "web")
		c.Spec.ClassName = other
		return mt.Client.Update(context.Background(), c)
	}, mt.Timeout, mt.Tick).Should(Succeed())
	addr := mt.BoundAddress(g, ns, "web")
	g.Expect(mt.InRange(otherV4)(addr.Address)).To(BeTrue(), "provisioned from the new class")
	g.Expect(mt.Kit.Address(g, addr.Name).Spec.ClassName).To(Equal(other))
	mt.HeldByPlaceholder(g, addr.Address)
}
