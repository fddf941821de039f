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

// These tests record what the Cilium operator's LB-IPAM does, as a backend
// built on it relies on; docs/writing-a-driver.md cites them by name.

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	b "github.com/cozystack/address-controller/test/builder"
)

// A pool's serviceSelector decides which Services it serves: a matching
// Service gets an address of the pool, another gets none and is told so in
// its condition, and gets one once it is labelled to match.
func TestCiliumSelectorDecidesWhoGetsAnAddress(t *testing.T) {
	g := NewWithT(t)
	ns := kit.Namespace(t)
	pool, cidr := freshPool(t, g)

	kit.Create(g, service(ns, "selected", pool, 80), service(ns, "other", "", 80))
	g.Eventually(ingress(g, ns, "selected"), timeout, tick).Should(ConsistOf(Satisfy(inPrefix(cidr))))
	g.Eventually(satisfied(g, ns, "selected"), timeout, tick).Should(And(
		HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "satisfied")))

	g.Eventually(satisfied(g, ns, "other"), timeout, tick).Should(refused("no_pool",
		"There are no enabled CiliumLoadBalancerIPPools that match this service"))
	g.Consistently(ingress(g, ns, "other"), settle, tick).Should(BeEmpty())

	other := kit.Service(g, ns, "other")
	other.Labels = map[string]string{labelPool: pool}
	g.Expect(k8s.Update(context.Background(), other)).To(Succeed())
	g.Eventually(ingress(g, ns, "other"), timeout, tick).Should(ConsistOf(Satisfy(inPrefix(cidr))))
}

// lbipam.cilium.io/ips gives a Service exactly the address it names; an
// address outside every pool that selects the Service is refused.
func TestCiliumPinGivesTheExactAddress(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 7)

	createPinned(g, ns, "pinned", pool, ip)

	kit.Create(g, service(ns, "outside", pool, 80, annotated(annotationIPs, "192.0.2.1")))
	g.Eventually(satisfied(g, ns, "outside"), timeout, tick).Should(refused("no_pool",
		"No pool exists with a CIDR containing '192.0.2.1'"))
	g.Consistently(ingress(g, ns, "outside"), settle, tick).Should(BeEmpty())
}

// Two Services with the same lbipam.cilium.io/sharing-key pinned to one
// address share it when their ports differ; when a port collides, the later
// one is refused and the first keeps the address. Without the key the
// second is refused whatever its ports.
func TestCiliumSharingKeySharesOnlyDisjointPorts(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 3)
	pin := annotated(annotationIPs, ip)
	key := annotated(annotationSharingKey, "k")

	createPinned(g, ns, "first", pool, ip, key)

	kit.Create(g, service(ns, "disjoint", pool, 443, pin, key))
	g.Eventually(ingress(g, ns, "disjoint"), timeout, tick).Should(Equal([]string{ip}))

	kit.Create(g, service(ns, "colliding", pool, 80, pin, key))
	g.Eventually(satisfied(g, ns, "colliding"), timeout, tick).Should(refused("already_allocated_incompatible_service",
		"The IP '"+ip+"' is already allocated to an incompatible service. Reason: same port and protocol"))
	g.Consistently(ingress(g, ns, "colliding"), settle, tick).Should(BeEmpty())

	kit.Create(g, service(ns, "keyless", pool, 8080, pin))
	g.Eventually(satisfied(g, ns, "keyless"), timeout, tick).Should(alreadyAllocated(ip))
	g.Consistently(ingress(g, ns, "keyless"), settle, tick).Should(BeEmpty())

	g.Expect(ingress(g, ns, "first")()).To(Equal([]string{ip}))
	g.Expect(ingress(g, ns, "disjoint")()).To(Equal([]string{ip}))
}

// Unpinned Services with one sharing key: the second takes the first's
// address when the ports differ, and another address when they collide.
func TestCiliumSharingKeyWithoutPin(t *testing.T) {
	g := NewWithT(t)
	ns := kit.Namespace(t)
	pool, _ := freshPool(t, g)
	key := annotated(annotationSharingKey, "k")

	kit.Create(g, service(ns, "first", pool, 80, key))
	g.Eventually(ingress(g, ns, "first"), timeout, tick).Should(HaveLen(1))
	ip := ingress(g, ns, "first")()[0]

	kit.Create(g, service(ns, "disjoint", pool, 443, key))
	g.Eventually(ingress(g, ns, "disjoint"), timeout, tick).Should(Equal([]string{ip}))

	kit.Create(g, service(ns, "colliding", pool, 80, key))
	g.Eventually(ingress(g, ns, "colliding"), timeout, tick).Should(HaveLen(1))
	g.Expect(ingress(g, ns, "colliding")()).NotTo(ContainElement(ip))
	g.Expect(satisfied(g, ns, "colliding")()).To(HaveField("Status", metav1.ConditionTrue))
}

// A refused Service is told through its status condition only: LB-IPAM
// records no event about it.
func TestCiliumRefusalIsAConditionNotAnEvent(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 5)

	holder := createPinned(g, ns, "holder", pool, ip)
	loser := service(ns, "loser", pool, 80, annotated(annotationIPs, ip))
	kit.Create(g, loser)
	g.Eventually(satisfied(g, ns, "loser"), timeout, tick).Should(alreadyAllocated(ip))
	g.Consistently(func() []string { return append(eventsAbout(g, holder), eventsAbout(g, loser)...) },
		settle, tick).Should(BeEmpty())
}

// A Service being deleted (held by a finalizer) keeps its address: another
// Service pinned to it is refused until the first is gone, then gets it.
func TestCiliumDeletingServiceKeepsItsAddress(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 9)
	const finalizer = "test.cilium.local/hold"

	doomed := createPinned(g, ns, "doomed", pool, ip, func(s *corev1.Service) { s.Finalizers = []string{finalizer} })
	g.Expect(k8s.Delete(context.Background(), doomed)).To(Succeed())
	g.Expect(kit.Service(g, ns, "doomed").DeletionTimestamp).NotTo(BeNil())

	refusedPin(g, ns, "next", pool, ip)
	g.Expect(ingress(g, ns, "doomed")()).To(Equal([]string{ip}))

	g.Eventually(func() error {
		s := kit.Service(g, ns, "doomed")
		s.Finalizers = nil
		return k8s.Update(context.Background(), s)
	}, timeout, tick).Should(Succeed())
	g.Eventually(kit.Gone(doomed), timeout, tick).Should(BeTrue())
	g.Eventually(ingress(g, ns, "next"), timeout, tick).Should(Equal([]string{ip}))
}

// Removing the pin leaves the Service on the address it was pinned to: the
// address stays taken, and another Service pinned to it is refused.
func TestCiliumUnpinnedServiceKeepsItsAddress(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 11)

	pinned := createPinned(g, ns, "pinned", pool, ip)

	kit.SetAnnotation(g, pinned, annotationIPs, "")
	g.Consistently(ingress(g, ns, "pinned"), settle, tick).Should(Equal([]string{ip}))
	g.Expect(satisfied(g, ns, "pinned")()).To(And(
		HaveField("Status", metav1.ConditionTrue), HaveField("Reason", "satisfied")))

	refusedPin(g, ns, "next", pool, ip)
}

// Re-pinning a Service to another address moves it there and frees the old
// one for the next Service pinned to it.
func TestCiliumRepinMovesTheService(t *testing.T) {
	g := NewWithT(t)
	ns := kit.Namespace(t)
	pool, cidr := freshPool(t, g)
	from, to := nthAddress(cidr, 12), nthAddress(cidr, 13)

	moving := createPinned(g, ns, "moving", pool, from)

	kit.SetAnnotation(g, moving, annotationIPs, to)
	g.Eventually(ingress(g, ns, "moving"), timeout, tick).Should(Equal([]string{to}))

	createPinned(g, ns, "next", pool, from)
}

// A pool over a CIDR hands out its network address first unless
// allowFirstLastIPs is "No".
func TestCiliumHandsOutTheNetworkAddress(t *testing.T) {
	g := NewWithT(t)
	ns := kit.Namespace(t)
	pool, cidr := freshPool(t, g)
	kit.Create(g, service(ns, "first", pool, 80))
	g.Eventually(ingress(g, ns, "first"), timeout, tick).Should(Equal([]string{nthAddress(cidr, 0)}))

	strict, strictCIDR := freshPool(t, g, allowFirstLastIPs("No"))
	kit.Create(g, service(ns, "strict", strict, 80))
	g.Eventually(ingress(g, ns, "strict"), timeout, tick).Should(Equal([]string{nthAddress(strictCIDR, 1)}))
}

// refused matches LB-IPAM's condition on a Service it gave no address.
func refused(reason, message string) OmegaMatcher {
	return Equal(metav1.Condition{Type: conditionSatisfied, Status: metav1.ConditionFalse, Reason: reason, Message: message})
}

// alreadyAllocated matches LB-IPAM's condition on a Service pinned to ip
// while another Service holds it.
func alreadyAllocated(ip string) OmegaMatcher {
	return refused("already_allocated", "The IP '"+ip+"' is already allocated to another service")
}

// createPinned creates a Service of pool on port 80, pinned to ip, and
// waits until LB-IPAM gives it ip.
func createPinned(g Gomega, ns, name, pool, ip string, opts ...b.ServiceOption) *corev1.Service {
	s := service(ns, name, pool, 80, append([]b.ServiceOption{annotated(annotationIPs, ip)}, opts...)...)
	kit.Create(g, s)
	g.Eventually(ingress(g, ns, name), timeout, tick).Should(Equal([]string{ip}))
	return s
}

// refusedPin creates a Service of pool on port 80, pinned to ip while
// another Service holds it, and sees LB-IPAM refuse it and give it nothing.
func refusedPin(g Gomega, ns, name, pool, ip string) {
	kit.Create(g, service(ns, name, pool, 80, annotated(annotationIPs, ip)))
	g.Eventually(satisfied(g, ns, name), timeout, tick).Should(alreadyAllocated(ip))
	g.Consistently(ingress(g, ns, name), settle, tick).Should(BeEmpty())
}

// A Service that stops matching every pool's selector loses its address.
func TestCiliumUnselectedServiceLosesItsAddress(t *testing.T) {
	g := NewWithT(t)
	ns := kit.Namespace(t)
	pool, cidr := freshPool(t, g)

	kit.Create(g, service(ns, "leaving", pool, 80))
	g.Eventually(ingress(g, ns, "leaving"), timeout, tick).Should(ConsistOf(Satisfy(inPrefix(cidr))))

	leaving := kit.Service(g, ns, "leaving")
	delete(leaving.Labels, labelPool)
	g.Expect(k8s.Update(context.Background(), leaving)).To(Succeed())
	g.Eventually(ingress(g, ns, "leaving"), timeout, tick).Should(BeEmpty())
	g.Expect(satisfied(g, ns, "leaving")()).To(refused("no_pool",
		"There are no enabled CiliumLoadBalancerIPPools that match this service"))
}

// A restarted operator learns the allocations back from the Services'
// status: every Service keeps its address, and a pin to a taken address is
// still refused.
func TestCiliumRestartKeepsAllocations(t *testing.T) {
	g, ns, pool, ip := onFreshPool(t, 4)

	kit.Create(g, service(ns, "pinned", pool, 80, annotated(annotationIPs, ip)), service(ns, "free", pool, 80))
	g.Eventually(ingress(g, ns, "pinned"), timeout, tick).Should(Equal([]string{ip}))
	g.Eventually(ingress(g, ns, "free"), timeout, tick).Should(HaveLen(1))
	free := ingress(g, ns, "free")()

	g.Expect(testCluster.KillCilium()).To(Succeed())
	g.Expect(testCluster.StartCilium()).To(Succeed())

	kit.Create(g, service(ns, "late", pool, 80, annotated(annotationIPs, ip)))
	g.Eventually(satisfied(g, ns, "late"), 2*timeout, tick).Should(alreadyAllocated(ip))
	g.Expect(ingress(g, ns, "pinned")()).To(Equal([]string{ip}))
	g.Expect(ingress(g, ns, "free")()).To(Equal(free))
	g.Expect(ingress(g, ns, "late")()).To(BeEmpty())
}
