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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestTheftIsDetected: with the driver stopped, a hold placeholder goes and
// a Service pins the address; the driver reports the conflict on start, and
// recovers once the thief is gone.
func TestTheftIsDetected(t *testing.T) {
	mt.StartCore(t)
	driver := mt.StartDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)

	thief := b.Service(ns, "thief", b.PinnedByHand(addr.Address))
	steal(t, g, driver, addr, thief)
	g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	a := mt.Kit.Address(g, addr.Name)
	g.Expect(testkit.Reason(a.Status.Conditions, v1alpha1.ConditionConflict)).To(Equal("HeldByAnotherService"))
	g.Eventually(mt.Kit.EventsAbout(g, a, v1alpha1.EventAddressConflict), mt.Timeout, mt.Tick).Should(ContainElement(ContainSubstring(ns + "/thief")))
	g.Eventually(mt.Kit.EventsAbout(g, mt.Kit.Service(g, ns, "thief"), v1alpha1.EventAddressConflict), mt.Timeout, mt.Tick).Should(
		ContainElement(ContainSubstring("claim " + ns + "/web")))
	g.Expect(mt.Kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound), "the binding is not lost")

	g.Expect(mt.Client.Delete(context.Background(), thief)).To(Succeed())
	g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	mt.HeldByPlaceholder(g, addr.Address)
}

func TestPlaceholderLabelOutsideThePlaceholderNamespaceIsNoExemption(t *testing.T) {
	mt.StartCore(t)
	driver := mt.StartDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	g.Consistently(mt.Kit.StateOfAddress(g, addr.Name), time.Second, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressBound),
		"the real placeholder, inside the namespace, is no conflict")

	// A forged placeholder in a tenant namespace takes the address while the
	// real hold is gone.
	forged := b.Service(ns, "forged", b.PinnedByHand(addr.Address),
		b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold), b.WithLabel(v1alpha1.LabelAddress, addr.Name))
	steal(t, g, driver, addr, forged)
	g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
	g.Expect(mt.Client.Delete(context.Background(), forged)).To(Succeed())
	g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	mt.HeldByPlaceholder(g, addr.Address)
}
