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

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestPlaceholdersAreMadeWhileMetalLBCatchesUp: while MetalLB ignores single
// Service events the driver changes no existing Service, but it makes a new
// claim's allocation placeholder at once, and the hold of an address whose
// carrier is deleted comes back at once, sharing the address with it: a new
// Service fails no full pass, and the next pass assigns it. What follows
// (the pin and record of the new claim's address, the carrier's finalizer)
// waits for MetalLB to handle single events again.
func TestPlaceholdersAreMadeWhileMetalLBCatchesUp(t *testing.T) {
	mt.StartCore(t)
	mt.StartDriverOpts(t, driver.HandoffAuto, trust, false)
	g := NewWithT(t)
	ctx := context.Background()
	ns, class, v4, addr := mt.ClaimedAndHeld(t, g)
	mt.Kit.Create(g, b.Service(ns, "carrier", b.ForClaim("web"), b.Port(80)))
	g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(Equal([]string{ns + "/carrier"}))

	before := map[string]float64{}
	for _, role := range []string{v1alpha1.PlaceholderAllocation, v1alpha1.PlaceholderHold} {
		before[role] = madeWhileShut(g, role)
	}
	lift := ignoringSingleEvents(t, g, ns, strings.TrimSuffix(v4, "0/28")+"14")
	time.Sleep(2 * trust) // the driver's last word from MetalLB is older than it trusts one
	mt.Kit.Create(g, b.Claim(ns, "asked", b.OfClass(class)))
	asked := placeholder.AllocationName(mt.Kit.Claim(g, ns, "asked").UID, v1alpha1.IPv4)
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, asked)), mt.Timeout, mt.Tick).Should(BeFalse(),
		"the request is made at once")
	g.Expect(mt.Client.Delete(ctx, mt.Kit.Service(g, ns, "carrier"))).To(Succeed())
	g.Eventually(mt.Placeholders(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveLen(1), "the hold comes back at once")
	hold := mt.Placeholders(g, addr.Name)()[0]
	g.Eventually(questionOut(g), mt.Timeout, mt.Tick).Should(BeTrue())
	for role, n := range before {
		g.Expect(madeWhileShut(g, role)).To(BeNumerically(">", n), "made while the gate is shut: "+role)
	}

	nudge := unrelatedPool(t, g) // a full pass at once, which fails again
	g.Eventually(mt.IngressOf(g, mt.PlaceholderNS, asked), mt.Timeout, mt.Tick).Should(ConsistOf(BeElementOf(hostsOf(v4))),
		"a full pass assigns the request, failing or not")
	g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(ConsistOf(ns+"/carrier", mt.PlaceholderNS+"/"+hold),
		"and shares the address between the hold and its carrier")
	g.Consistently(mt.Kit.StateOfClaim(g, ns, "asked"), 3*time.Second, mt.Tick).ShouldNot(HaveField("Phase", v1alpha1.ClaimBound),
		"the pin waits for MetalLB to handle single events")
	g.Expect(mt.Kit.Gone(b.Service(ns, "carrier"))()).To(BeFalse(), "so does the carrier's finalizer")

	lift()
	passAgain(g, nudge)
	bound := mt.BoundAddress(g, ns, "asked")
	g.Expect(mt.Placeholders(g, bound.Name)()).To(Equal([]string{asked}), "the request, adopted as the hold")
	g.Eventually(mt.Kit.Gone(b.Service(ns, "carrier")), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(Equal([]string{mt.PlaceholderNS + "/" + hold}))
}

// madeWhileShut reads how many placeholders of role the drivers of this
// process made while their gate was shut.
func madeWhileShut(g Gomega, role string) float64 {
	for _, m := range testkit.Series(g, "metallb_iad_placeholders_made_while_catching_up_total") {
		for _, l := range m.GetLabel() {
			if l.GetName() == "role" && l.GetValue() == role {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// hostsOf lists the IPv4 addresses of a /28.
func hostsOf(cidr string) []string {
	base := strings.TrimSuffix(cidr, "0/28")
	out := make([]string, 16)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", base, i)
	}
	return out
}
