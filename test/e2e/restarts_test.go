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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
)

var _ = Describe("Restarts", func() {
	It("lose nothing: stopping each manager and MetalLB mid-provisioning and mid-handoff, every claim converges once", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-restarts")
		t.classOver(ctx, "restarts", "198.51.100.80/28")
		claims := func(from, to int) string {
			var y string
			for i := from; i < to; i++ {
				y += "---" + testkit.ClaimYAML(ns, fmt.Sprintf("c%d", i), "restarts")
			}
			return y
		}
		restart := func(m harness.Manager) {
			Expect(h.StopManager(ctx, m)).To(Succeed())
			Expect(h.StartManager(ctx, m)).To(Succeed())
		}

		By("provisioning, interrupted by every component")
		apply(ctx, claims(0, 10))
		restart(harness.Driver)
		restart(harness.Core)
		Expect(h.StopMetalLB(ctx)).To(Succeed())
		apply(ctx, claims(10, 12))
		Expect(h.StartMetalLB(ctx)).To(Succeed())
		for i := range 12 {
			Eventually(kit.StateOfClaim(Default, ns, fmt.Sprintf("c%d", i)), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		}

		By("handoffs, interrupted by every component")
		for i := range 6 {
			apply(ctx, testkit.ClaimingServiceYAML(ns, fmt.Sprintf("s%d", i), fmt.Sprintf("c%d", i)))
		}
		restart(harness.Driver)
		Expect(h.StopMetalLB(ctx)).To(Succeed())
		Expect(h.StartMetalLB(ctx)).To(Succeed())
		restart(harness.Core)

		By("every address is held exactly once, by its Service or by one placeholder")
		seen := map[string]string{}
		for i := range 12 {
			c := kit.Claim(Default, ns, fmt.Sprintf("c%d", i))
			Expect(c.Status.Addresses).To(HaveLen(1))
			a := c.Status.Addresses[0]
			Expect(seen).NotTo(HaveKey(a.Address), "an address bound to two claims")
			seen[a.Address] = c.Name
			if i < 6 {
				Eventually(func() []string { return holders(a.Address) }, timeout, tick).Should(Equal([]string{fmt.Sprintf("%s/s%d", ns, i)}))
			} else {
				Eventually(func() []string { return holders(a.Address) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))
			}
		}
		By("no placeholder leaks: one hold per unattached address, none left allocating")
		Eventually(func() []string { return placeholdersOfClass(ctx, "restarts") }, timeout, tick).Should(HaveLen(6))
		for _, p := range placeholdersOfClass(ctx, "restarts") {
			Expect(p).To(HavePrefix("hold:"))
		}
		list := &v1alpha1.IPAddressList{}
		Expect(kit.List(ctx, list)).To(Succeed())
		n := 0
		for _, a := range list.Items {
			if a.Spec.ClassName == "restarts" {
				n++
			}
		}
		Expect(n).To(Equal(12), "one IPAddress per claim, no duplicates")
	})
})

// placeholdersOfClass lists "role:name" of the placeholders drawing from a
// class.
func placeholdersOfClass(ctx context.Context, class string) []string {
	GinkgoHelper()
	list := &corev1.ServiceList{}
	Expect(kit.List(ctx, list, client.InNamespace(h.PlaceholderNamespace()),
		client.MatchingLabels{v1alpha1.LabelClass: class})).To(Succeed())
	var out []string
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			out = append(out, s.Labels[v1alpha1.LabelPlaceholder]+":"+s.Name)
		}
	}
	return out
}
