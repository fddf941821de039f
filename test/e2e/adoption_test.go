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
	b "github.com/cozystack/address-controller/test/builder"
)

// The adoption procedure of address-controller-operating.md, step by step,
// with the manifests as the manual writes them.
var _ = Describe("Adopting an address a Service already holds", func() {
	It("keeps the address on the Service throughout, and the hand-written pin stays", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-a")
		t.own(b.Class("public", ""))
		apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClass
metadata:
  name: public
spec:
  provisioner: metallb.drivers.local.sdn.cozystack.io
  reclaimPolicy: Retain
  parameters:
    addresses: ["203.0.113.0/24"]
`)
		By("a Service pinned by hand to an address of the class's range")
		apply(ctx, `
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: tenant-a
  annotations:
    metallb.io/loadBalancerIPs: 203.0.113.7
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: web}
  ports: [{port: 80}]
`)
		ingress := func() []string { return ingressOf(ns, "web") }
		Eventually(ingress, timeout, tick).Should(Equal([]string{"203.0.113.7"}))
		keeps := func() { Consistently(ingress, 2*time.Second, tick).Should(Equal([]string{"203.0.113.7"})) }

		By("1. the claim, naming the class and the address to come")
		apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata:
  name: web
  namespace: tenant-a
spec:
  className: public
  addressName: ip-203-0-113-7
`)
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
		keeps()

		By("2. the IPAddress, pre-bound to it")
		apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddress
metadata:
  name: ip-203-0-113-7
spec:
  address: 203.0.113.7
  className: public
  reclaimPolicy: Retain
  claimRef: {namespace: tenant-a, name: web}
  source: {fromClass: {}}
`)
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		keeps()

		By("3. the Service names the claim")
		out, err := kubectl(ctx, "", "-n", ns, "annotate", "service", "web", "local.sdn.cozystack.io/ip-address-claim=web")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(Default, "ip-203-0-113-7").Status.AssociatedTo },
			timeout, tick).Should(HaveField("Name", "web"))
		Eventually(kit.StateOfAddress(Default, "ip-203-0-113-7"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
		keeps()
		Expect(kit.Service(Default, ns, "web").Annotations).To(And(
			HaveKeyWithValue("metallb.io/loadBalancerIPs", "203.0.113.7"),
			Not(HaveKey(v1alpha1.AnnotationPinnedBy))), "the pin is still the hand-written one")

		By("removing the annotation later leaves the hand-written pin in place")
		out, err = kubectl(ctx, "", "-n", ns, "annotate", "service", "web", "local.sdn.cozystack.io/ip-address-claim-")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(Default, "ip-203-0-113-7").Status.AssociatedTo },
			timeout, tick).Should(BeNil())
		Consistently(func() string { return kit.Service(Default, ns, "web").Annotations["metallb.io/loadBalancerIPs"] },
			2*time.Second, tick).Should(Equal("203.0.113.7"))
		keeps()
	})

	It("reclaims an address created before its claim at once", func(ctx SpecContext) {
		t := newTidy()
		t.namespace(ctx, "tenant-early")
		t.classOver(ctx, "early", "192.0.2.0/28")
		apply(ctx, preBoundYAML("ip-192-0-2-5", "192.0.2.5", "early", v1alpha1.ReclaimRetain, "tenant-early", "web")+
			"---"+preBoundYAML("ip-192-0-2-6", "192.0.2.6", "early", v1alpha1.ReclaimDelete, "tenant-early", "web"))
		Eventually(kit.StateOfAddress(Default, "ip-192-0-2-5"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
		Eventually(kit.Gone(b.Address("ip-192-0-2-6", "", "")), timeout, tick).Should(BeTrue())
	})
})

// preBoundYAML is the IPAddress name of ip and class, pre-bound to the claim
// ns/claim, as the YAML an admin writes.
func preBoundYAML(name, ip, class string, policy v1alpha1.ReclaimPolicy, ns, claim string) string {
	return `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddress
metadata: {name: ` + name + `}
spec:
  address: ` + ip + `
  className: ` + class + `
  reclaimPolicy: ` + string(policy) + `
  claimRef: {namespace: ` + ns + `, name: ` + claim + `}
  source: {fromClass: {}}
`
}

// ingressOf lists the addresses a Service's load balancer reports.
func ingressOf(ns, name string) []string { return kit.Ingress(Default, ns, name)() }
