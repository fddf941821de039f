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

package crashtest

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

// startDyingDriver runs a driver whose n-th write, once armed, is its last.
func startDyingDriver(t *testing.T, handoff string, n int) (*inprocess.Manager, *testkit.Killer) {
	d := testkit.NewKiller(n)
	return mt.StartDriverOn(t, d.Config(mt.Cluster.Config), mt.DriverOptions(handoff)), d
}

// TestKilledBetweenHandoffSteps kills the driver right after each write of
// each handoff (both modes, both directions) and starts it again: the next
// driver converges, with the address held or carried by one Service, and,
// for the shared handoff, never unreported.
func TestKilledBetweenHandoffSteps(t *testing.T) {
	mt.StartCore(t)
	for _, mode := range []string{driver.HandoffAuto, driver.HandoffGap} {
		for _, direction := range []string{"associate", "dissociate"} {
			for n := 1; n <= 5; n++ {
				t.Run(fmt.Sprintf("%s %s after write %d", mode, direction, n), func(t *testing.T) {
					g := NewWithT(t)
					first := mt.StartDriverWith(t, mode)
					ns, _, _, addr := mt.ClaimedAndHeld(t, g)
					svc := b.Service(ns, "a")
					if direction == "dissociate" {
						svc = b.Service(ns, "a", b.ForClaim("web"))
					}
					mt.Kit.Create(g, svc)
					if direction == "dissociate" {
						g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
						g.Eventually(mt.Placeholders(g, addr.Name), mt.Timeout, mt.Tick).Should(BeEmpty())
					}
					first.Stop()
					watcher := mt.WatchIPs(t, g, addr.Address)

					dyingDriver, d := startDyingDriver(t, mode, n)
					d.Ignore("/services/metallb-iad-probe-") // the gate's questions, asked at every start
					// The class's counts and condition, written when the
					// driver gets to the class, no step of the handoff.
					d.Ignore("/ipaddressclasses/")
					d.Arm()
					if direction == "associate" {
						mt.Kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
					} else {
						mt.RemoveAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
					}
					select {
					case <-d.Dead():
					case <-time.After(mt.Timeout):
						t.Errorf("the handoff took fewer than %d writes: %v", n, d.Written())
					}
					dyingDriver.Stop()
					t.Logf("killed after %v", d.Written())
					g.Expect(d.Written()).To(HaveEach(Or(
						ContainSubstring("/ipaddresses/"+addr.Name), ContainSubstring("/namespaces/"+ns+"/services/a"),
						ContainSubstring("/namespaces/"+mt.PlaceholderNS+"/services/hold-"), ContainSubstring("/namespaces/"+mt.PlaceholderNS+"/services/alloc-"),
						Equal("POST /api/v1/namespaces/"+mt.PlaceholderNS+"/services"))), "killed within the handoff, not before it")

					mt.StartDriverWith(t, mode)
					if direction == "associate" {
						g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
						g.Eventually(mt.Placeholders(g, addr.Name), mt.Timeout, mt.Tick).Should(BeEmpty())
						g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(Equal([]string{ns + "/a"}))
					} else {
						mt.HeldByPlaceholder(g, addr.Address)
						g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(BeEmpty())
						g.Eventually(func() *v1alpha1.WorkloadReference { return mt.Kit.Address(g, addr.Name).Status.AssociatedTo }, mt.Timeout, mt.Tick).Should(BeNil())
						g.Eventually(func() []string { return mt.Kit.Service(g, ns, "a").Finalizers }, mt.Timeout, mt.Tick).Should(BeEmpty())
					}
					g.Expect(mt.Kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
					g.Expect(mt.Kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
					if mode == driver.HandoffAuto {
						g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty(), "a shared handoff never frees the address, crash or not")
					}
				})
			}
		}
	}
}
