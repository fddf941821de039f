//go:build e2e

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

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// holders lists "namespace/name" of every Service whose load balancer
// reports ip.
func holders(ip string) []string { return kit.Holders(Default, ip)() }

var _ = Describe("The flagship flow", func() {
	It("keeps a claimed address across Services: claim, hold, attach A, delete A, held, attach B", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-flagship")
		t.own(b.Class("flagship", ""))
		apply(ctx, testkit.ClassYAML("flagship", metallbProvisioner, `
  parameters: {addresses: ["198.51.100.0/28"], avoidBuggyIPs: true}
`)+"---"+testkit.ClaimYAML(ns, "web", "flagship"))
		By("the claim is Bound to an address X that a placeholder holds")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		x := kit.Claim(Default, ns, "web").Status.Addresses[0].Address
		placeholderHolds := ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/"))
		Eventually(func() []string { return holders(x) }, timeout, tick).Should(placeholderHolds)

		By("Service A names the claim and gets X; the placeholder is gone")
		apply(ctx, testkit.ClaimingServiceYAML(ns, "a", "web"))
		Eventually(func() []string { return holders(x) }, timeout, tick).Should(Equal([]string{ns + "/a"}))

		By("deleting A: a placeholder holds X again and the claim stays Bound")
		_, err := kubectl(ctx, "", "-n", ns, "delete", "service", "a")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() []string { return holders(x) }, timeout, tick).Should(placeholderHolds)
		Expect(kit.StateOfClaim(Default, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))

		By("Service B names the claim and gets the same X")
		apply(ctx, testkit.ClaimingServiceYAML(ns, "b", "web"))
		Eventually(func() []string { return holders(x) }, timeout, tick).Should(Equal([]string{ns + "/b"}))
	})
})
