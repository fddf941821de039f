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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

var _ = Describe("Class access", func() {
	It("leaves MetalLB untouched for refused claims; one racing claim passes a limit of one", func(ctx SpecContext) {
		const class = "access"
		t := newTidy()
		outside, inside := t.namespace(ctx, "tenant-access-out"), t.namespace(ctx, "tenant-access-in")
		out, err := kubectl(ctx, "", "label", "namespace", inside, "tier=public")
		Expect(err).NotTo(HaveOccurred(), out)
		t.class(ctx, class, `
  namespaceSelector:
    matchLabels: {tier: public}
  addressesPerNamespace: 1
  parameters: {addresses: ["198.51.100.128/28"]}
`)
		out, err = kubectl(ctx, "", "get", "ipclass", class)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(And(ContainSubstring("PER-NAMESPACE"), ContainSubstring(`{"matchLabels":{"tier":"public"}}`)))

		By("a claim from a namespace the class does not serve")
		kit.Create(Default, b.Claim(outside, "web", b.OfClass(class)))
		Eventually(kit.StateOfClaim(Default, outside, "web"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonClassNotAllowed}))

		By("claims racing for the one address a namespace may hold")
		racing := make([]client.Object, 0, 4)
		for i := range 4 {
			racing = append(racing, b.Claim(inside, fmt.Sprintf("c%d", i), b.OfClass(class)))
		}
		kit.CreateConcurrently(Default, racing...)
		Eventually(claimsByPhase(inside), timeout, tick).Should(Equal(map[string]int{
			"Bound/Bound": 1, "Pending/ClassLimitReached": 3}))

		By("MetalLB saw only the admitted claim: no placeholder, no address for the others")
		refusedUIDs := refusedClaimUIDs(outside, inside)
		Expect(refusedUIDs).To(HaveLen(4))
		Consistently(func() []string { return classFootprint(class, refusedUIDs) }, 5*time.Second, tick).Should(BeEmpty())
		Expect(addressesOfClass(class)).To(HaveLen(1))
		Eventually(func() string {
			out, _ := kubectl(ctx, "", "get", "ipclass", class)
			return out
		}, timeout, tick).Should(MatchRegexp(`(?s)CAPACITY\s+USED\s+AVAILABLE.*True\s+16\s+1\s+15\s`),
			"kubectl shows the class's 16 addresses, the one used and the 15 left")
		out, err = kubectl(ctx, "", "-n", inside, "get", "ipusage", class)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`access\s+1\s`))

		By("deleting the bound claim admits exactly one waiting claim; labelling the other namespace admits its claim")
		// Pick the bound claim before deleting it: once it goes, a waiting
		// claim is admitted and bound, and must not be taken for it.
		var bound client.Object
		for _, c := range racing {
			if kit.Claim(Default, inside, c.GetName()).Status.Phase == v1alpha1.ClaimBound {
				bound = c
			}
		}
		Expect(bound).NotTo(BeNil())
		Expect(kit.Delete(ctx, bound)).To(Succeed())
		Eventually(kit.Gone(bound), timeout, tick).Should(BeTrue())
		Eventually(claimsByPhase(inside), timeout, tick).Should(Equal(map[string]int{
			"Bound/Bound": 1, "Pending/ClassLimitReached": 2}))
		out, err = kubectl(ctx, "", "label", "namespace", outside, "tier=public")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(kit.StateOfClaim(Default, outside, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		Expect(classFootprint(class, refusedClaimUIDs(inside))).To(BeEmpty())
	})
})

// claimsByPhase counts a namespace's claims by phase and Bound reason.
func claimsByPhase(ns string) func() map[string]int {
	return func() map[string]int {
		list := &v1alpha1.IPAddressClaimList{}
		Expect(kit.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		out := map[string]int{}
		for _, c := range list.Items {
			out[string(c.Status.Phase)+"/"+testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound)]++
		}
		return out
	}
}

// refusedClaimUIDs lists the claims of the namespaces that their class refused.
func refusedClaimUIDs(namespaces ...string) map[string]string {
	out := map[string]string{}
	for _, ns := range namespaces {
		list := &v1alpha1.IPAddressClaimList{}
		Expect(kit.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		for _, c := range list.Items {
			switch testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound) {
			case v1alpha1.ReasonClassNotAllowed, v1alpha1.ReasonClassLimitReached:
				Expect(c.Annotations).NotTo(HaveKey(v1alpha1.AnnotationProvisioner), "claim %s/%s", ns, c.Name)
				out[string(c.UID)] = ns + "/" + c.Name
			}
		}
	}
	return out
}

// classFootprint names every placeholder Service provisioning for, and every
// IPAddress bound to, one of the given claims.
func classFootprint(class string, claims map[string]string) []string {
	var found []string
	list := &corev1.ServiceList{}
	Expect(kit.List(context.Background(), list, client.InNamespace(h.PlaceholderNamespace()))).To(Succeed())
	for _, s := range list.Items {
		if who, ok := claims[s.Labels[v1alpha1.LabelClaimUID]]; ok {
			found = append(found, "placeholder "+s.Name+" for "+who)
		}
	}
	for _, a := range addressesOfClass(class) {
		if ref := a.Spec.ClaimRef; ref != nil {
			if _, ok := claims[string(ref.UID)]; ok || ref.UID == "" {
				found = append(found, "address "+a.Name+" for "+ref.Key())
			}
		}
	}
	return found
}

func addressesOfClass(class string) []v1alpha1.IPAddress {
	list := &v1alpha1.IPAddressList{}
	Expect(kit.List(context.Background(), list)).To(Succeed())
	var out []v1alpha1.IPAddress
	for _, a := range list.Items {
		if a.Spec.ClassName == class {
			out = append(out, a)
		}
	}
	return out
}
