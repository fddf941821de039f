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

package steadytest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
)

const (
	allowSharedIP = "metallb.io/allow-shared-ip"
	sharedBy      = "local.sdn.cozystack.io/sharing-key"
)

// TestAFormerTenantKeepsNothing: a claim under reclaimPolicy Retain, carried
// by a Service through a shared handoff, is deleted. Its former carrier is
// left with neither the driver's pin nor the sharing key the driver wrote,
// the Released address's hold shares a key of its own from then on, and a
// Service that carries the pin and the old key (the tenant could read it on
// its Service) does not get the address: the hold keeps it.
func TestAFormerTenantKeepsNothing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, _, _ := mt.Class(t, g, false, b.ClassReclaim(v1alpha1.ReclaimRetain))
	mt.Kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	addr := mt.BoundAddress(g, ns, "web")
	mt.HeldByPlaceholder(g, addr.Address)

	mt.Kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
	g.Eventually(mt.Kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), mt.Timeout, mt.Tick).Should(Equal(driver.ReasonSharedHandoff))
	oldKey := mt.Kit.Service(g, ns, "a").Annotations[allowSharedIP]
	g.Expect(oldKey).NotTo(BeEmpty(), "the tenant can read the key on its Service")

	watcher := mt.WatchIPs(t, g, addr.Address)
	g.Expect(mt.Client.Delete(context.Background(), mt.Kit.Claim(g, ns, "web"))).To(Succeed())
	g.Eventually(mt.Kit.Gone(b.Claim(ns, "web")), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Eventually(mt.Kit.StateOfAddress(g, addr.Name), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.AddressReleased))

	// The former carrier keeps nothing the driver wrote, and lets go.
	g.Eventually(func() *corev1.Service { return mt.Kit.Service(g, ns, "a") }, mt.Timeout, mt.Tick).Should(SatisfyAll(
		HaveField("ObjectMeta.Annotations", SatisfyAll(
			Not(HaveKey("metallb.io/loadBalancerIPs")), Not(HaveKey(v1alpha1.AnnotationPinnedBy)),
			Not(HaveKey(allowSharedIP)), Not(HaveKey(sharedBy)))),
		HaveField("ObjectMeta.Finalizers", Not(ContainElement(v1alpha1.DriverCarrierFinalizer(mt.Provisioner))))))
	g.Eventually(mt.IngressOf(g, ns, "a"), mt.Timeout, mt.Tick).Should(BeEmpty())

	// The hold shares a key no tenant ever saw, and holds the address.
	g.Eventually(holdKey(g, addr.Name), mt.Timeout, mt.Tick).Should(SatisfyAll(HavePrefix("iad-"), Not(Equal(oldKey))))
	mt.HeldByPlaceholder(g, addr.Address)
	g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty(), "the hold came back before the carrier let go, and kept the address as its key changed")

	// The old key no longer opens the address.
	thief := b.Service(ns, "thief", b.PinnedByHand(addr.Address))
	metav1.SetMetaDataAnnotation(&thief.ObjectMeta, allowSharedIP, oldKey)
	mt.Kit.Create(g, thief)
	g.Eventually(func() []string { return mt.ServiceEvents(g, ns, "thief") }, mt.Timeout, mt.Tick).Should(
		ContainElement(HavePrefix("AllocationFailed")), "MetalLB refuses the old key")
	g.Consistently(mt.Holders(g, addr.Address), 2*time.Second, mt.Tick).Should(ConsistOf(HavePrefix(mt.PlaceholderNS + "/")))
	g.Expect(watcher.Took(ns, "thief")).To(BeZero(), "the former tenant's Service got the address")
	g.Expect(mt.Kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressReleased))
	g.Expect(holdKey(g, addr.Name)()).NotTo(Equal(oldKey))
}

// holdKey reads the allow-shared-ip key of an address's hold ("" while it
// has none, or more than one placeholder).
func holdKey(g Gomega, addressName string) func() string {
	return func() string {
		names := mt.Placeholders(g, addressName)()
		if len(names) != 1 {
			return ""
		}
		svc := &corev1.Service{}
		if err := mt.Client.Get(context.Background(), client.ObjectKey{Namespace: mt.PlaceholderNS, Name: names[0]}, svc); err != nil {
			return ""
		}
		return svc.Annotations[allowSharedIP]
	}
}
