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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
)

var _ = Describe("A forged placeholder", func() {
	It("is a conflict outside the placeholder namespace, and the real placeholder inside it is not", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-forge")
		t.classOver(ctx, "forge", "198.51.100.64/28")
		apply(ctx, testkit.ClaimYAML(ns, "web", "forge"))
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, ns, "web").Status.Addresses[0]
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))
		// The claim's Bound can come before the address's own pass writes
		// Bound: wait for that before asking it to stay.
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
		Consistently(kit.StateOfAddress(Default, addr.Name), 2*time.Second, tick).Should(HaveField("Phase", v1alpha1.AddressBound),
			"the real placeholder, inside the placeholder namespace, is no conflict")

		By("with the driver stopped, the hold goes and a Service carrying the placeholder label takes the address")
		Expect(h.StopManager(ctx, harness.Driver)).To(Succeed())
		out, err := kubectl(ctx, "", "-n", h.PlaceholderNamespace(), "delete", "service", "-l", "local.sdn.cozystack.io/address="+addr.Name)
		Expect(err).NotTo(HaveOccurred(), out)
		apply(ctx, `
apiVersion: v1
kind: Service
metadata:
  name: forged
  namespace: tenant-forge
  labels: {local.sdn.cozystack.io/placeholder: hold, local.sdn.cozystack.io/address: `+addr.Name+`}
  annotations: {metallb.io/loadBalancerIPs: `+addr.Address+`}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  ports: [{port: 9}]
`)
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(Equal([]string{ns + "/forged"}))
		Expect(h.StartManager(ctx, harness.Driver)).To(Succeed())
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
		Eventually(kit.EventsAbout(Default, kit.Address(Default, addr.Name), v1alpha1.EventAddressConflict), timeout, tick).Should(
			ContainElement(ContainSubstring(ns + "/forged")))

		By("once the forgery goes, the address is Bound and held again")
		_, err = kubectl(ctx, "", "-n", ns, "delete", "service", "forged")
		Expect(err).NotTo(HaveOccurred())
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))
	})
})
