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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestSharedHandoffNeverFreesTheAddress walks a claim's addresses through
// association, dissociation, re-association and the carrier's deletion, for
// an IPv4, an IPv6 and a dual-stack claim, and proves from a watch on every
// Service that some Service (hold or workload) reported each address at
// every observed moment.
func TestSharedHandoffNeverFreesTheAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		family v1alpha1.IPFamily
		shape  []b.ServiceOption
	}{
		{"IPv4", v1alpha1.IPv4, nil},
		{"IPv6", v1alpha1.IPv6, []b.ServiceOption{b.IPv6Only()}},
		{"dual-stack", v1alpha1.Dual, []b.ServiceOption{b.DualStack()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := mt.Namespace(t)
			class, _, _ := mt.Class(t, g, tc.family != v1alpha1.IPv4)
			mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(class), b.Family(tc.family)))
			g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
			addrs := mt.Kit.Claim(g, ns, "web").Status.Addresses
			ips := make([]string, 0, len(addrs))
			var want []string
			for _, a := range addrs {
				ips = append(ips, a.Address)
				mt.HeldByPlaceholder(g, a.Address)
			}
			want = ips
			watcher := mt.WatchIPs(t, g, ips...)

			carriedShared := func(svc string) {
				g.Eventually(mt.IngressOf(g, ns, svc), mt.Timeout, mt.Tick).Should(ConsistOf(want))
				for _, a := range addrs {
					g.Eventually(mt.Kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonSharedHandoff))
					g.Eventually(mt.Placeholders(g, a.Name), mt.Timeout, mt.Tick).Should(BeEmpty(), "the hold goes once the Service has the address")
				}
			}
			heldAgain := func() {
				for _, a := range addrs {
					mt.HeldByPlaceholder(g, a.Address)
					g.Eventually(mt.Kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonNotAssociated))
				}
			}

			svc := b.Service(ns, "a", append([]b.ServiceOption{b.ForClaim("web")}, tc.shape...)...)
			mt.Kit.Create(g, svc)
			carriedShared("a")
			g.Expect(mt.Kit.Service(g, ns, "a").Finalizers).To(ContainElement(v1alpha1.DriverCarrierFinalizer(mt.Provisioner)))

			mt.RemoveAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
			heldAgain()
			s := mt.Kit.Service(g, ns, "a")
			g.Expect(s.Annotations).NotTo(HaveKey("metallb.io/allow-shared-ip"), "the driver's key goes with its pin")
			g.Expect(s.Finalizers).NotTo(ContainElement(v1alpha1.DriverCarrierFinalizer(mt.Provisioner)))

			mt.Kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
			carriedShared("a")

			// Deleting the carrier: the hold is back before the Service goes.
			g.Expect(mt.Client.Delete(context.Background(), mt.Kit.Service(g, ns, "a"))).To(Succeed())
			g.Eventually(mt.Kit.Gone(b.Service(ns, "a")), mt.Timeout, mt.Tick).Should(BeTrue())
			heldAgain()

			// A second Service, then the claim goes: up to then nothing was free.
			mt.Kit.Create(g, b.Service(ns, "b", append([]b.ServiceOption{b.ForClaim("web")}, tc.shape...)...))
			carriedShared("b")
			for ip, gaps := range watcher.Gaps() {
				g.Expect(gaps).To(BeEmpty(), "%s went unreported during a shared handoff", ip)
			}
			g.Expect(mt.Client.Delete(context.Background(), mt.Kit.Claim(g, ns, "web"))).To(Succeed())
			g.Eventually(mt.Kit.Gone(mt.Kit.Claim(g, ns, "web")), mt.Timeout, mt.Tick).Should(BeTrue())
		})
	}
}

// TestGapHandoffWhereMetalLBCannotShare: a Service with traffic policy Local
// and a selector, and one using the hold's port, take their address by the
// gap handoff, and the address says why.
func TestGapHandoffWhereMetalLBCannotShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, says string
		shape      b.ServiceOption
	}{
		{"traffic policy Local", "LocalTrafficPolicy", b.LocalTraffic()},
		{"the hold's port", "PortCollision", b.Port(9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns, _, _, addr := mt.ClaimedAndHeld(t, g)
			watcher := mt.WatchIPs(t, g, addr.Address)
			mt.Kit.Create(g, b.Service(ns, "a", b.ForClaim("web"), tc.shape))
			g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
			g.Eventually(mt.Kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonGapHandoff))
			cond := testkit.Condition(mt.Kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionAssociated)
			g.Expect(cond.Message).To(ContainSubstring(tc.says))
			g.Expect(mt.Kit.Service(g, ns, "a").Annotations).NotTo(HaveKey("metallb.io/allow-shared-ip"))

			mt.RemoveAnnotation(g, mt.Kit.Service(g, ns, "a"), v1alpha1.AnnotationIPAddressClaim)
			mt.HeldByPlaceholder(g, addr.Address)
			gaps := watcher.Gaps()[addr.Address]
			g.Expect(gaps).To(HaveLen(2), "one window on the way in, one on the way out")
			t.Logf("gap handoff windows for %s: %v", addr.Address, gaps)
		})
	}
}

// handoffs associates and dissociates Service "a" with claim "web" n times
// each, back to back, failing the test on the first that does not complete
// within.
func handoffs(g Gomega, ns, ip string, n int, within time.Duration) {
	svc := b.Service(ns, "a", b.ForClaim("web"))
	mt.Kit.Create(g, svc)
	for i := range n {
		g.Eventually(mt.IngressOf(g, ns, "a"), within, 20*time.Millisecond).Should(Equal([]string{ip}), "association %d", i+1)
		mt.RemoveAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
		g.Eventually(mt.Holders(g, ip), within, 20*time.Millisecond).Should(ConsistOf(HavePrefix(mt.PlaceholderNS+"/")), "dissociation %d", i+1)
		mt.Kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	}
}

// TestAContenderNeverGetsASharedAddress: while a claim's address goes back
// and forth between its hold and a Service (10 associations and 10
// dissociations; 100 of each under make test-stress), a Service pinned to
// the same address by hand asks MetalLB for it continuously; it never gets
// it.
func TestAContenderNeverGetsASharedAddress(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	watcher := mt.WatchIPs(t, g, addr.Address)
	contender, stop := mt.Contend(t, g, ns, addr.Address, 20*time.Millisecond)
	rounds := testkit.Rounds(10, 100)
	handoffs(g, ns, addr.Address, rounds, mt.Timeout)
	stop()
	g.Expect(watcher.Took(ns, contender)).To(BeZero(), "the contender got the address")
	g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty())
	t.Logf("%d shared handoffs, %d watch events: the contender never got %s", 2*rounds, watcher.Events(), addr.Address)
}
