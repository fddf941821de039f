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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

// startDyingDriver runs a driver whose n-th write, once armed, is its last.
func startDyingDriver(t *testing.T, handoff string, n int) (*inprocess.Manager, *testkit.Killer) {
	d := testkit.NewKiller(n)
	cfg := d.Config(testCluster.Config)
	opts := metallb.Options{PlaceholderNamespace: placeholderNS, MetalLBNamespace: cluster.MetalLBNamespace}
	opts.Driver.Concurrency = 4
	opts.Driver.Handoff = handoff
	m := inprocess.Start(t, cfg, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
	return m, d
}

// TestKilledBetweenHandoffSteps kills the driver right after each write of
// each handoff (both modes, both directions) and starts it again: the next
// driver converges, with the address held or carried by one Service, and,
// for the shared handoff, never unreported.
func TestKilledBetweenHandoffSteps(t *testing.T) {
	startCore(t)
	for _, mode := range []string{driver.HandoffAuto, driver.HandoffGap} {
		for _, direction := range []string{"associate", "dissociate"} {
			for n := 1; n <= 5; n++ {
				t.Run(fmt.Sprintf("%s %s after write %d", mode, direction, n), func(t *testing.T) {
					g := NewWithT(t)
					first := startDriverWith(t, mode)
					ns, _, _, addr := claimedAndHeld(t, g)
					svc := b.Service(ns, "a")
					if direction == "dissociate" {
						svc = b.Service(ns, "a", b.ForClaim("web"))
					}
					kit.Create(g, svc)
					if direction == "dissociate" {
						g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
						g.Eventually(placeholders(g, addr.Name), timeout, tick).Should(BeEmpty())
					}
					first.Stop()
					watcher := watchIPs(t, g, addr.Address)

					dyingDriver, d := startDyingDriver(t, mode, n)
					d.Ignore("/services/metallb-iad-probe-") // the gate's questions, asked at every start
					d.Arm()
					if direction == "associate" {
						kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
					} else {
						removeAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
					}
					select {
					case <-d.Dead():
					case <-t.Context().Done():
					}
					dyingDriver.Stop()
					t.Logf("killed after %v", d.Written())
					g.Expect(d.Written()).To(HaveEach(Or(
						ContainSubstring("/ipaddresses/"+addr.Name), ContainSubstring("/namespaces/"+ns+"/services/a"),
						ContainSubstring("/namespaces/"+placeholderNS+"/services/hold-"), ContainSubstring("/namespaces/"+placeholderNS+"/services/alloc-"),
						Equal("POST /api/v1/namespaces/"+placeholderNS+"/services"))), "killed within the handoff, not before it")

					startDriverWith(t, mode)
					if direction == "associate" {
						g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
						g.Eventually(placeholders(g, addr.Name), timeout, tick).Should(BeEmpty())
						g.Eventually(holders(g, addr.Address), timeout, tick).Should(Equal([]string{ns + "/a"}))
					} else {
						heldByPlaceholder(g, addr.Address)
						g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(BeEmpty())
						g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, addr.Name).Status.AssociatedTo }, timeout, tick).Should(BeNil())
						g.Eventually(func() []string { return kit.Service(g, ns, "a").Finalizers }, timeout, tick).Should(BeEmpty())
					}
					g.Expect(kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
					g.Expect(kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
					if mode == driver.HandoffAuto {
						g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty(), "a shared handoff never frees the address, crash or not")
					}
				})
			}
		}
	}
}
