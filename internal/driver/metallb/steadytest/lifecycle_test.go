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
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

func TestExhaustedPoolLeavesClaimsPendingUntilCapacityFrees(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	name := testkit.Name(t)
	v4, _ := mt.FreshRange()
	base := strings.TrimSuffix(v4, "0/28")
	mt.Kit.Make(t, g, b.Class(name, mt.Provisioner, b.ClassReclaim(v1alpha1.ReclaimDelete),
		b.Parameters(`{"addresses": ["`+base+`1-`+base+`2"]}`)))
	for i := range 3 {
		mt.Kit.Create(g, b.Claim(ns, fmt.Sprintf("c%d", i), b.OfClass(name)))
	}
	phases := func() []v1alpha1.IPAddressClaimPhase {
		out := make([]v1alpha1.IPAddressClaimPhase, 0, 3)
		for i := range 3 {
			out = append(out, mt.Kit.Claim(g, ns, fmt.Sprintf("c%d", i)).Status.Phase)
		}
		return out
	}
	g.Eventually(phases, mt.Timeout, mt.Tick).Should(ConsistOf(v1alpha1.ClaimBound, v1alpha1.ClaimBound, v1alpha1.ClaimPending))
	g.Consistently(phases, 2*time.Second, mt.Tick).Should(ConsistOf(v1alpha1.ClaimBound, v1alpha1.ClaimBound, v1alpha1.ClaimPending))
	var pending, bound string
	for i := range 3 {
		c := mt.Kit.Claim(g, ns, fmt.Sprintf("c%d", i))
		if c.Status.Phase == v1alpha1.ClaimPending {
			pending = c.Name
			g.Expect(testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound)).To(Equal(v1alpha1.ReasonWaitingForProvisioning))
		} else {
			bound = c.Name
		}
	}
	g.Expect(mt.Client.Delete(context.Background(), b.Claim(ns, bound))).To(Succeed())
	g.Eventually(mt.Kit.StateOfClaim(g, ns, pending), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
}

func TestReclaimPolicies(t *testing.T) {
	t.Parallel()

	t.Run("Delete: the IPAddress, its placeholder and the MetalLB assignment go", func(t *testing.T) {
		g := NewWithT(t)
		ns := mt.Namespace(t)
		class, _, _ := mt.Class(t, g, false, b.ClassReclaim(v1alpha1.ReclaimDelete))
		mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
		addr := mt.BoundAddress(g, ns, "web")
		mt.HeldByPlaceholder(g, addr.Address)
		g.Expect(mt.Kit.Address(g, addr.Name).Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimDelete))
		g.Expect(mt.Client.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
		g.Eventually(mt.Kit.Gone(b.Address(addr.Name, "", "")), mt.Timeout, mt.Tick).Should(BeTrue())
		g.Eventually(mt.Placeholders(g, addr.Name), mt.Timeout, mt.Tick).Should(BeEmpty())
		g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(BeEmpty())
		mt.AddressIsFree(g, ns, addr.Address)
	})

	t.Run("Retain: the address goes Released and MetalLB still holds it", func(t *testing.T) {
		g := NewWithT(t)
		ns, _, _, addr := mt.ClaimedAndHeld(t, g)
		mt.Kit.Create(g, b.Service(ns, "svc", b.ForClaim("web")))
		g.Eventually(mt.IngressOf(g, ns, "svc"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
		g.Expect(mt.Client.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
		g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
		// The binding ended: the Service lets go and the hold returns.
		mt.HeldByPlaceholder(g, addr.Address)
		g.Consistently(mt.Holders(g, addr.Address), 2*time.Second, mt.Tick).Should(ConsistOf(HavePrefix(mt.PlaceholderNS + "/")))
		g.Expect(mt.Kit.Service(g, ns, "svc").Annotations).NotTo(HaveKey("metallb.io/loadBalancerIPs"))
		g.Expect(mt.Kit.EventsAbout(g, mt.Kit.Address(g, addr.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty())
	})
}

func TestOrphanedAllocationPlaceholderIsDeleted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, _, _ := mt.Class(t, g, false)
	orphan := b.Service(mt.PlaceholderNS, "alloc-00000000-0000-0000-0000-000000000000-v4")
	orphan.Spec.Selector = nil
	orphan.Labels = map[string]string{v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation,
		v1alpha1.LabelClaimUID: "00000000-0000-0000-0000-000000000000", v1alpha1.LabelClass: class}
	orphan.Annotations = map[string]string{"metallb.io/address-pool": params.PoolName(class), "local.sdn.cozystack.io/claim": ns + "/gone"}
	mt.Kit.Create(g, orphan)
	g.Eventually(mt.Kit.Gone(orphan), mt.Timeout, mt.Tick).Should(BeTrue())
}
