//go:build cilium

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

package cilium_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/cilium"
	b "github.com/cozystack/address-controller/test/builder"
)

const (
	annotationCrossNamespace = "lbipam.cilium.io/sharing-cross-namespace"
	annotationSharedBy       = "local.sdn.cozystack.io/sharing-key"
)

// TestAFormerTenantKeepsNothing: a claim under reclaimPolicy Retain, carried
// by a Service through a shared handoff, is deleted. Its former carrier is
// left with neither the driver's pin nor the sharing key the driver wrote,
// the Released address's hold shares a key of its own from then on, and a
// Service that carries the pin, the pool's label and the old key (the
// tenant could read it on its Service) does not get the address: the hold
// keeps it.
func TestAFormerTenantKeepsNothing(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns := kit.Namespace(t)
	class := ciliumClass(t, g)
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	addr := kit.Claim(g, ns, "web").Status.Addresses[0]
	g.Expect(kit.Address(g, addr.Name).Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimRetain), "the classes' default")
	held := ConsistOf(HavePrefix(placeholderNS + "/"))
	g.Eventually(kit.Holders(g, addr.Address), timeout, tick).Should(held)

	kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(kit.Ingress(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
	g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	oldKey := kit.Service(g, ns, "a").Annotations[annotationSharingKey]
	g.Expect(oldKey).NotTo(BeEmpty(), "the tenant can read the key on its Service")

	g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, "web"))).To(Succeed())
	g.Eventually(kit.Gone(b.Claim(ns, "web")), timeout, tick).Should(BeTrue())
	g.Eventually(kit.StateOfAddress(g, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))

	// The former carrier keeps nothing the driver wrote, and lets go.
	g.Eventually(func() *corev1.Service { return kit.Service(g, ns, "a") }, timeout, tick).Should(SatisfyAll(
		HaveField("ObjectMeta.Annotations", SatisfyAll(
			Not(HaveKey(annotationIPs)), Not(HaveKey(v1alpha1.AnnotationPinnedBy)),
			Not(HaveKey(annotationSharingKey)), Not(HaveKey(annotationCrossNamespace)), Not(HaveKey(annotationSharedBy)))),
		HaveField("ObjectMeta.Labels", Not(HaveKey(cilium.LabelPool))),
		HaveField("ObjectMeta.Finalizers", Not(ContainElement(v1alpha1.DriverCarrierFinalizer(v1alpha1.ProvisionerCilium))))))
	g.Eventually(kit.Ingress(g, ns, "a"), timeout, tick).Should(BeEmpty())

	// The hold shares a key no tenant ever saw, and holds the address.
	g.Eventually(holdKey(g, addr.Address), timeout, tick).Should(SatisfyAll(HavePrefix("iad-"), Not(Equal(oldKey))))
	g.Eventually(kit.Holders(g, addr.Address), timeout, tick).Should(held)

	// The old key no longer opens the address.
	thief := b.Service(ns, "thief", b.WithLabel(cilium.LabelPool, class), annotated(annotationIPs, addr.Address),
		annotated(annotationSharingKey, oldKey), annotated(annotationCrossNamespace, "*"))
	kit.Create(g, thief)
	g.Eventually(satisfied(g, ns, "thief"), timeout, tick).Should(HaveField("Status", metav1.ConditionFalse), "LB-IPAM refuses the old key")
	g.Consistently(kit.Holders(g, addr.Address), settle, tick).Should(held)
	g.Expect(kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressReleased))
	g.Expect(holdKey(g, addr.Address)()).NotTo(Equal(oldKey))
}

// holdKey reads the sharing key of the placeholder that reports ip ("" while
// another Service, or none, reports it).
func holdKey(g Gomega, ip string) func() string {
	return func() string {
		holders := kit.Holders(g, ip)()
		if len(holders) != 1 || !strings.HasPrefix(holders[0], placeholderNS+"/") {
			return ""
		}
		svc := &corev1.Service{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: placeholderNS, Name: strings.TrimPrefix(holders[0], placeholderNS+"/")}, svc); err != nil {
			return ""
		}
		return svc.Annotations[annotationSharingKey]
	}
}
