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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestACarrierDeletedWhileTheDriverIsDown: the carrier finalizer keeps a
// Service Terminating while the driver is down; the operating manual's
// procedure lets it go, and the driver, back, holds the address again.
func TestACarrierDeletedWhileTheDriverIsDown(t *testing.T) {
	mt.StartCore(t)
	drv := mt.StartDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	mt.Kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(mt.Kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonSharedHandoff))
	drv.Stop()

	g.Expect(mt.Client.Delete(context.Background(), mt.Kit.Service(g, ns, "a"))).To(Succeed())
	g.Consistently(func() bool { return mt.Kit.Service(g, ns, "a").DeletionTimestamp != nil }, time.Second, mt.Tick).Should(BeTrue(),
		"the Service waits for the driver")

	cmd := exec.Command("bash", "-euo", "pipefail", "-c", testkit.CarrierFinalizerScript)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+mt.Cluster.Kubeconfig,
		"PATH="+filepath.Dir(mt.Cluster.Assets.Kubectl())+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Eventually(mt.Kit.Gone(b.Service(ns, "a")), mt.Timeout, mt.Tick).Should(BeTrue())

	mt.StartDriver(t)
	mt.HeldByPlaceholder(g, addr.Address)
	g.Eventually(mt.Kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonNotAssociated))
}

// TestAContenderUnderTheGapHandoff runs the contender of
// TestAContenderNeverGetsASharedAddress against a driver forced to the gap
// handoff (5 rounds; 100 under make test-stress), whose every window of an
// address free in MetalLB's books is the contender's chance. It counts how
// often the contender took the address, and proves each time that the claim
// did not lose it: once the contender is gone, the address is back with its
// hold or its carrier. Here the contender asks every 100 ms: MetalLB writes
// the status of a Service it gives the address to, and a rewrite every 20 ms
// on a loaded machine makes that write fail on a conflict again and again,
// so that MetalLB counts the address as the contender's while no Service
// reports it.
func TestAContenderUnderTheGapHandoff(t *testing.T) {
	mt.StartCore(t)
	mt.StartDriverWith(t, driver.HandoffGap)
	g := NewWithT(t)
	ns, _, _, addr := mt.ClaimedAndHeld(t, g)
	watcher := mt.WatchIPs(t, g, addr.Address)
	const period, patience = 100 * time.Millisecond, 3 * mt.Timeout
	contender, stop := mt.Contend(t, g, ns, addr.Address, period)
	svc := b.Service(ns, "a")
	mt.Kit.Create(g, svc)
	stolen, rounds := 0, testkit.Rounds(5, 100)
	// settle waits for want to report the address, or the contender; after
	// a theft it removes the contender and waits for want again.
	settle := func(want func() []string, what string) {
		g.Eventually(func() []string {
			if h := mt.Holders(g, addr.Address)(); slices.Contains(h, ns+"/"+contender) {
				return h
			}
			return want()
		}, patience, 20*time.Millisecond).ShouldNot(BeEmpty(), what)
		if !slices.Contains(mt.Holders(g, addr.Address)(), ns+"/"+contender) {
			return
		}
		stolen++
		stop()
		g.Expect(mt.Client.Delete(context.Background(), b.Service(ns, contender))).To(Succeed())
		g.Eventually(mt.Kit.Gone(b.Service(ns, contender)), mt.Timeout, mt.Tick).Should(BeTrue())
		g.Eventually(want, patience, mt.Tick).ShouldNot(BeEmpty(), "%s after the contender went", what)
		contender, stop = mt.Contend(t, g, ns, addr.Address, period)
	}
	carried := func() []string {
		if slices.Equal(mt.IngressOf(g, ns, "a")(), []string{addr.Address}) {
			return []string{ns + "/a"}
		}
		return nil
	}
	held := func() []string {
		h := mt.Holders(g, addr.Address)()
		if len(h) == 1 && strings.HasPrefix(h[0], mt.PlaceholderNS+"/") {
			return h
		}
		return nil
	}
	for range rounds {
		mt.Kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		settle(carried, "Service a carries the address")
		mt.RemoveAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
		settle(held, "the hold has the address back")
	}
	stop()
	g.Expect(mt.Kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated)()).To(Equal(driver.ReasonNotAssociated))
	g.Expect(mt.Kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	t.Logf("%d gap handoffs, %d watch events: the contender took %s %d times (%d windows, longest %v)",
		2*rounds, watcher.Events(), addr.Address, stolen, len(watcher.Gaps()[addr.Address]), slices.Max(append(watcher.Gaps()[addr.Address], 0)))
}
