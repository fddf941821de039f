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
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// teardownSetup creates a class with a bound claim carried by a Service and a
// static Available address, and returns the address names.
func teardownSetup(ctx context.Context, ns, class, v4 string) (bound, static string) {
	GinkgoHelper()
	apply(ctx, testkit.ClassYAML(class, metallbProvisioner, `
  reclaimPolicy: Delete
  parameters: {addresses: ["`+v4+`"]}
`)+"---"+testkit.ClaimYAML(ns, "web", class)+"---"+testkit.ClaimingServiceYAML(ns, "web", "web"))
	Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	bound = kit.Claim(Default, ns, "web").Status.Addresses[0].Name
	Eventually(func() []string { return ingressOf(ns, "web") }, timeout, tick).ShouldNot(BeEmpty())
	static = "static-" + class
	apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddress
metadata: {name: `+static+`}
spec:
  address: `+v4[:len(v4)-4]+`9
  className: `+class+`
  source: {fromClass: {}}
`)
	Eventually(kit.StateOfAddress(Default, static), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	return bound, static
}

// Each spec's tidy installs the charts again if the spec left them
// uninstalled: the cluster is left as the other specs expect it.
var _ = Describe("Removing the controllers", Ordered, func() {
	It("in the documented order leaves nothing behind", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-teardown")
		t.own(b.Class("teardown", ""))
		bound, static := teardownSetup(ctx, ns, "teardown", "198.51.100.96/28")
		ip := kit.Address(Default, bound).Spec.Address

		By("1. remove the claim annotation from Services")
		out, err := kubectl(ctx, "", "-n", ns, "annotate", "service", "web", "local.sdn.cozystack.io/ip-address-claim-")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() []string { return ingressOf(ns, "web") }, timeout, tick).Should(BeEmpty())
		By("2. delete every IPAddressClaim")
		out, err = kubectl(ctx, "", "-n", ns, "delete", "ipaddressclaims.local.sdn.cozystack.io", "--all")
		Expect(err).NotTo(HaveOccurred(), out)
		By("3. delete the IPAddress objects left")
		Eventually(kit.Gone(b.Address(bound, "", "")), timeout, tick).Should(BeTrue(), "reclaimPolicy Delete")
		out, err = kubectl(ctx, "", "delete", "ipaddresses.local.sdn.cozystack.io", static)
		Expect(err).NotTo(HaveOccurred(), out)
		By("4. delete the classes")
		out, err = kubectl(ctx, "", "delete", "ipaddressclasses.local.sdn.cozystack.io", "teardown")
		Expect(err).NotTo(HaveOccurred(), out)
		By("5. uninstall the driver, then the core")
		Expect(h.UninstallCharts(ctx)).To(Succeed())

		Expect(holders(ip)).To(BeEmpty(), "no MetalLB assignment left")
		Expect(placeholdersOfClass(ctx, "teardown")).To(BeEmpty(), "no placeholder left")
		for _, name := range []string{"ipaddressclaims", "ipaddresses", "ipaddressclasses"} {
			crd := &metav1.PartialObjectMetadata{}
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			Expect(kit.Get(ctx, client.ObjectKey{Name: name + "." + v1alpha1.GroupVersion.Group}, crd)).To(Succeed(), "helm uninstall leaves the CRDs")
		}
		Expect(h.InstallCharts(ctx)).To(Succeed())
	})

	It("when the controllers are already gone, the finalizer-clearing commands free everything", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-stranded")
		t.own(b.Class("stranded", ""))
		bound, static := teardownSetup(ctx, ns, "stranded", "198.51.100.112/28")
		Expect(h.UninstallCharts(ctx)).To(Succeed())

		objs := []client.Object{b.Claim(ns, "web"), b.Address(bound, "", ""), b.Address(static, "", ""), b.Class("stranded", "")}
		for _, o := range objs {
			Expect(kit.Delete(ctx, o)).To(Succeed())
		}
		Consistently(kit.Gone(objs[0]), 2*time.Second, tick).Should(BeFalse(), "without the controllers, deletion hangs")

		out, err := shell(ctx, testkit.FinalizerClearingScript)
		Expect(err).NotTo(HaveOccurred(), out)
		for _, o := range objs {
			Eventually(kit.Gone(o), timeout, tick).Should(BeTrue(), o.GetName())
		}
	})
})
