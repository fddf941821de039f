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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

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
