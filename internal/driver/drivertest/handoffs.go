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

package drivertest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// sharedHandoff walks a claim's addresses (of family: IPv6 on an IPv6-only
// Service, Dual on a dual-stack one) through association, dissociation,
// association again, the carrier's deletion and a second Service, and proves from a watch on every Service that some Service (the
// hold or the workload) reported each address at every observed moment.
// The carrier keeps the driver's carrier finalizer while it shares, and
// nothing of the driver's once it lets go.
func sharedHandoff(t *testing.T, g *WithT, s *suite, family v1alpha1.IPFamily) {
	ns, addrs := s.heldClaim(t, g, family)
	shape := b.DualStack()
	if family == v1alpha1.IPv6 {
		shape = b.IPv6Only()
	}
	for _, a := range addrs {
		g.Eventually(s.holderOf(g, ns, a.Address), timeout, tick).ShouldNot(BeEmpty(), "a hold of the backend's reports %s", a.Address)
	}
	watcher := testkit.WatchIPs(t, g, s.cfg, ips(addrs)...)
	finalizer := v1alpha1.DriverCarrierFinalizer(s.h.Provisioner())
	shared := func(name string) {
		s.carried(g, ns, name, addrs)
		for _, a := range addrs {
			g.Eventually(s.kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
			g.Eventually(s.kit.Holders(g, a.Address), timeout, tick).Should(Equal([]string{ns + "/" + name}), "the hold goes once the Service has %s", a.Address)
		}
		g.Expect(s.kit.Service(g, ns, name).Finalizers).To(ContainElement(finalizer))
	}
	heldAgain := func() {
		for _, a := range addrs {
			g.Eventually(s.holderOf(g, ns, a.Address), timeout, tick).ShouldNot(BeEmpty(), "the hold has %s back", a.Address)
			g.Eventually(s.kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonNotAssociated))
		}
	}

	svc := b.Service(ns, "a", b.ForClaim("web"), shape)
	s.kit.Create(g, svc)
	shared("a")
	s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "")
	heldAgain()
	g.Eventually(func() *corev1.Service { return s.kit.Service(g, ns, "a") }, timeout, tick).Should(And(
		HaveField("ObjectMeta.Finalizers", Not(ContainElement(finalizer))),
		HaveField("ObjectMeta.Annotations", Not(HaveKey(v1alpha1.AnnotationPinnedBy)))), "the carrier keeps nothing of the driver's")
	s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	shared("a")

	// Deleting the carrier: the hold is back before the Service goes.
	g.Expect(s.c.Delete(context.Background(), s.kit.Service(g, ns, "a"))).To(Succeed())
	g.Eventually(s.kit.Gone(svc), timeout, tick).Should(BeTrue())
	heldAgain()
	s.kit.Create(g, b.Service(ns, "b", b.ForClaim("web"), shape))
	shared("b")
	for ip, gaps := range watcher.Gaps() {
		g.Expect(gaps).To(BeEmpty(), "%s went unreported during a shared handoff", ip)
	}
}

// gapHandoff: a Service of each shape the backend cannot share an address
// with its hold takes the address by the gap handoff, and the address says
// why; the Service keeps no finalizer of the driver's, and once it lets go
// the hold has the address back, after one window in which nothing
// reported it on the way in and one on the way out.
func gapHandoff(t *testing.T, g *WithT, s *suite, holder ServiceHolder) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4)
	words := slices.Sorted(maps.Keys(holder.Unshareable()))
	addrs := map[string]v1alpha1.ClaimedAddress{}
	for _, word := range words {
		s.claim(g, ns, strings.ToLower(word), class, v1alpha1.IPv4)
	}
	for _, word := range words {
		addrs[word] = s.bound(g, ns, strings.ToLower(word))[0]
		g.Eventually(s.holderOf(g, ns, addrs[word].Address), timeout, tick).ShouldNot(BeEmpty())
	}
	all := make([]string, 0, len(addrs))
	for _, a := range addrs {
		all = append(all, a.Address)
	}
	watcher := testkit.WatchIPs(t, g, s.cfg, all...)
	for _, word := range words {
		s.kit.Create(g, b.Service(ns, strings.ToLower(word), b.ForClaim(strings.ToLower(word)), holder.Unshareable()[word]))
	}
	for _, word := range words {
		name, a := strings.ToLower(word), addrs[word]
		s.carried(g, ns, name, []v1alpha1.ClaimedAddress{a})
		g.Eventually(s.condition(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(And(
			HaveField("Reason", driver.ReasonGapHandoff), HaveField("Message", ContainSubstring(word))))
		g.Expect(s.kit.Service(g, ns, name).Finalizers).To(BeEmpty(), "a gap pin needs no finalizer")
	}
	for _, word := range words {
		s.kit.SetAnnotation(g, s.kit.Service(g, ns, strings.ToLower(word)), v1alpha1.AnnotationIPAddressClaim, "")
	}
	for _, word := range words {
		a := addrs[word]
		g.Eventually(s.holderOf(g, ns, a.Address), timeout, tick).ShouldNot(BeEmpty(), "the hold has %s back", a.Address)
		gaps := watcher.Gaps()[a.Address]
		g.Expect(gaps).To(HaveLen(2), "%s: one window on the way in, one on the way out", word)
		t.Logf("gap handoff windows of %s (%s): %v", a.Address, word, gaps)
	}
}

// holdComesBack: the Service the backend holds an address with, deleted
// behind the driver's back, is replaced by a new one.
func holdComesBack(t *testing.T, g *WithT, s *suite) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	ip := addrs[0].Address
	holdUID := func() types.UID {
		holder := s.holderOf(g, ns, ip)()
		hold := &corev1.Service{}
		hns, name, _ := strings.Cut(holder, "/")
		if holder == "" || s.c.Get(context.Background(), client.ObjectKey{Namespace: hns, Name: name}, hold) != nil {
			return ""
		}
		return hold.UID
	}
	g.Eventually(holdUID, timeout, tick).ShouldNot(BeEmpty(), "a hold of the backend's reports %s", ip)
	before := holdUID()
	hns, name, _ := strings.Cut(s.holderOf(g, ns, ip)(), "/")
	g.Expect(s.c.Delete(context.Background(), b.Service(hns, name))).To(Succeed())
	g.Eventually(holdUID, timeout, tick).Should(And(Not(BeEmpty()), Not(Equal(before))), "a new hold reports %s", ip)
	s.held(g, addrs)
}

// upgradeToShared: a driver forced to the gap handoff gives a Service that
// could share the address by the gap handoff, and says so; it writes no
// finalizer. A driver of the default mode, started in its place, upgrades
// the carrier to the shared handoff (the carrier finalizer) without the
// Service ever letting go of the address, and makes no hold meanwhile.
func upgradeToShared(t *testing.T, g *WithT, s *suite, holder ServiceHolder) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	ip := addrs[0].Address
	restart := s.stopDriver(t)
	gap := holder.StartGapDriver(t, s.cfg)
	s.kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	s.carried(g, ns, "a", addrs)
	g.Eventually(s.condition(g, addrs[0].Name, v1alpha1.ConditionAssociated), timeout, tick).Should(And(
		HaveField("Reason", driver.ReasonGapHandoff), HaveField("Message", ContainSubstring(driver.ReasonGapForced))))
	g.Eventually(s.kit.Holders(g, ip), timeout, tick).Should(Equal([]string{ns + "/a"}), "the hold went")
	g.Expect(s.kit.Service(g, ns, "a").Finalizers).To(BeEmpty(), "a gap pin needs no finalizer")
	gap.Stop()

	watcher := testkit.WatchIPs(t, g, s.cfg, ip)
	restart()
	g.Eventually(func() []string { return s.kit.Service(g, ns, "a").Finalizers }, timeout, tick).Should(
		ContainElement(v1alpha1.DriverCarrierFinalizer(s.h.Provisioner())))
	g.Eventually(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	g.Consistently(s.kit.Holders(g, ip), settle, tick).Should(Equal([]string{ns + "/a"}), "the Service keeps the address, and no hold is made")
	g.Expect(watcher.Gaps()[ip]).To(BeEmpty())
}

// holderOf reads the one Service outside the tenant's namespace ns that
// reports ip, the backend's hold, as "namespace/name"; "" while another
// Service, or none, or more than one, reports it.
func (s *suite) holderOf(g *WithT, ns, ip string) func() string {
	return func() string {
		holders := s.kit.Holders(g, ip)()
		if len(holders) != 1 || strings.HasPrefix(holders[0], ns+"/") {
			return ""
		}
		return holders[0]
	}
}
