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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
)

// TestAnAllocationNothingNeedsGoes: while MetalLB is down, a claim asks the
// driver for an address and is then bound to a static address of its class
// by the core. Its allocation placeholder goes, so that MetalLB, back, gives
// no address to a placeholder the ledger would never record.
func TestAnAllocationNothingNeedsGoes(t *testing.T) {
	mt.StartCore(t)
	mt.StartTrustingDriver(t, driver.HandoffAuto)
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, v4, _ := mt.Class(t, g, false)
	claim, _ := pendingWithMetalLBDown(t, g, ns, class, "web")

	static := strings.TrimSuffix(v4, "0/28") + "9"
	mt.Kit.Make(t, g, b.Address(class+"-static", static, class))
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "web"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(mt.AllocationsOf(g, claim), mt.Timeout, mt.Tick).Should(BeEmpty(), "the allocation goes once the claim is bound")

	g.Expect(mt.Cluster.StartMetalLB()).To(Succeed())
	mt.HeldByPlaceholder(g, static)
	g.Consistently(func() []string {
		list := &corev1.ServiceList{}
		g.Expect(mt.Client.List(context.Background(), list, client.InNamespace(mt.PlaceholderNS))).To(Succeed())
		var unrecorded []string
		for _, s := range list.Items {
			for _, in := range s.Status.LoadBalancer.Ingress {
				if strings.HasPrefix(in.IP, strings.TrimSuffix(v4, "0/28")) && in.IP != static {
					unrecorded = append(unrecorded, s.Name+"="+in.IP)
				}
			}
		}
		return unrecorded
	}, 2*time.Second, mt.Tick).Should(BeEmpty(), "no placeholder holds an address the ledger does not record")
}
