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

package importtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/importer"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestHandoverKeepsServicesNamingThePool is issue 41's story: Services the
// admin's auto-assigned pool served name that pool (metallb.io/address-pool,
// or its legacy spelling); they are imported, and the handover removes the
// pool. MetalLB refuses a pinned address from any pool but the one a
// Service names, so the handover must not leave them naming it: it refuses
// while a Service it did not import names the pool, and otherwise unties
// the imported ones first. Through it and after it, every Service keeps its
// address, and MetalLB moves it into the class's pool without clearing or
// refusing it. Afterwards, a sync putting the annotation back makes MetalLB
// take an address away: the address says Dropped, on it and on the
// Service, stays Bound and goes to no one else, and clears once the
// annotation goes again.
func TestHandoverKeepsServicesNamingThePool(t *testing.T) {
	g := begin(t)
	ctx := context.Background()
	ns, other := kit.Namespace(t), kit.Namespace(t)
	v4, _, v6 := freshPrefixes()
	classRanges := []string{v4 + "0/28", v6 + "/124"}
	legacy := legacyPool(t, g, classRanges, ns, other)
	names := []string{"named", "named-legacy", "named-v6", "plain"}
	kit.Create(g, b.Service(ns, "named", annotated("metallb.io/address-pool", legacy)),
		b.Service(ns, "named-legacy", annotated("metallb.universe.tf/address-pool", legacy)),
		b.Service(ns, "named-v6", b.IPv6Only(), annotated("metallb.io/address-pool", legacy)),
		b.Service(ns, "plain"),
		// Outside the import's scope: the handover never rewrites it.
		b.Service(other, "stranger", annotated("metallb.io/address-pool", legacy)))
	start := map[string]string{}
	for _, key := range append(keys(ns, names...), other+"/stranger") {
		svcNS, name, _ := strings.Cut(key, "/")
		g.Eventually(lbIngress(svcNS, name), timeout, tick).ShouldNot(BeEmpty(), key)
		start[key] = lbIngress(svcNS, name)()
	}
	class := "named-" + suffix(ns)
	blockedClass(t, g, class, classRanges)
	importStart := settle(g, ns)
	watcher := watchIngress(t, g, start)

	scope := importer.Scope{Class: class, Namespaces: []string{ns}, PlaceholderNamespace: placeholderNS}
	var out bytes.Buffer
	g.Expect(importer.Run(ctx, k8s, backend, importer.Options{Driver: "metallb-iad", Scope: scope, Mode: importer.ModeImport,
		Apply: true, Timeout: timeout}, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(importedClaims(g, ns)).To(HaveLen(len(names)))

	// The plan unties the imported Services naming the pool, and blocks
	// on the one it did not import.
	handover := importer.Options{Driver: "metallb-iad", Scope: scope, Mode: importer.ModeHandover, Timeout: timeout}
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, handover, &out)).To(Succeed())
	plan := out.String()
	t.Log("\n" + plan)
	for name, key := range map[string]string{"named": "metallb.io/address-pool", "named-legacy": "metallb.universe.tf/address-pool",
		"named-v6": "metallb.io/address-pool"} {
		g.Expect(plan).To(ContainSubstring(fmt.Sprintf("untie imported Service %s/%s first: it names IPAddressPool %s in %s", ns, name, legacy, key)))
	}
	g.Expect(plan).NotTo(ContainSubstring(ns + "/plain first"))
	blocked := fmt.Sprintf("blocked: Service %s/stranger holds %s but names IPAddressPool %s in metallb.io/address-pool", other, start[other+"/stranger"], legacy)
	g.Expect(plan).To(ContainSubstring(blocked))

	// Applied, it refuses, listing the Service and why, and changes nothing.
	handover.Apply = true
	out.Reset()
	err := importer.Run(ctx, k8s, backend, handover, &out)
	g.Expect(err).To(MatchError(And(ContainSubstring("would take addresses away"), ContainSubstring("Service "+other+"/stranger holds"))))
	g.Expect(poolAddresses(g, legacy)()).To(Equal(classRanges))
	g.Expect(poolAddresses(g, params.PoolName(class))()).To(BeEmpty())
	g.Expect(kit.Service(g, ns, "named").Annotations).To(HaveKeyWithValue("metallb.io/address-pool", legacy))

	// The admin lifts the stranger's tie by hand; the handover runs.
	kit.SetAnnotation(g, kit.Service(g, other, "stranger"), "metallb.io/address-pool", "")
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, handover, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(poolAddresses(g, legacy)()).To(BeEmpty(), "the legacy pool is gone")
	g.Eventually(renderedReason(g, class), timeout, tick).Should(Equal("Rendered"))

	// MetalLB moved every Service into the class's pool (the handover
	// waited for it), and none lost or changed its address on the way.
	for key := range start {
		svcNS, name, _ := strings.Cut(key, "/")
		annotations := kit.Service(g, svcNS, name).Annotations
		g.Expect(annotations).To(HaveKeyWithValue("metallb.io/ip-allocated-from-pool", params.PoolName(class)),
			"%s: %s", key, strings.Join(eventsOf(g, key), "\n"))
		g.Expect(annotations).NotTo(HaveKey("metallb.io/address-pool"), key)
		g.Expect(annotations).NotTo(HaveKey("metallb.universe.tf/address-pool"), key)
	}
	g.Consistently(watcher.Violations, 3*time.Second, tick).Should(BeEmpty())
	for _, reason := range []string{"ClearAssignment", "AllocationFailed"} {
		g.Expect(serviceEvents(g, reason)).NotTo(HaveKey(Or(HavePrefix(ns+"/"), HavePrefix(other+"/"))), reason)
	}
	allocated := serviceEvents(g, "IPAllocated")
	for key := range start {
		svcNS, name, _ := strings.Cut(key, "/")
		g.Expect(lbIngress(svcNS, name)()).To(Equal(start[key]), key)
		g.Expect(allocated[key]).To(BeTemporally("<", importStart), "%s: %s", key, strings.Join(eventsOf(g, key), "\n"))
	}
	watcher.stop()

	// A sync puts the annotation back: MetalLB takes the address away.
	ip := start[ns+"/named"]
	address := ipaddr.ObjectName(mustAddr(ip))
	named := kit.Service(g, ns, "named")
	kit.SetAnnotation(g, named, "metallb.io/address-pool", legacy)
	g.Eventually(lbIngress(ns, "named"), timeout, tick).Should(BeEmpty())
	g.Eventually(kit.AddressReason(g, address, v1alpha1.ConditionDropped), timeout, tick).Should(Equal(v1alpha1.ReasonNoLongerReported))
	g.Expect(testkit.Condition(kit.Address(g, address).Status.Conditions, v1alpha1.ConditionDropped).Status).To(Equal(metav1.ConditionTrue))
	g.Eventually(kit.EventsAbout(g, kit.Address(g, address), v1alpha1.EventAddressDropped), timeout, tick).
		Should(ContainElement(ContainSubstring("Service " + ns + "/named no longer reports " + ip)))
	g.Eventually(kit.EventsAbout(g, named, v1alpha1.EventAddressDropped), timeout, tick).
		Should(ContainElement(ContainSubstring("no longer reports " + ip)))
	// Nothing bound is lost or handed to anyone else.
	g.Consistently(func(g Gomega) {
		a := kit.Address(g, address)
		g.Expect(a.Status.Phase).To(Equal(v1alpha1.AddressBound))
		g.Expect(a.Status.AssociatedTo).To(HaveField("Name", "named"))
		g.Expect(kit.Claim(g, ns, "named").Status.Phase).To(Equal(v1alpha1.ClaimBound))
		g.Expect(holders(g, ip)()).To(BeEmpty())
	}, 3*time.Second, tick).Should(Succeed())

	// The annotation goes again: the Service reports its address, and the
	// address says so.
	kit.SetAnnotation(g, named, "metallb.io/address-pool", "")
	g.Eventually(lbIngress(ns, "named"), timeout, tick).Should(Equal(ip))
	g.Eventually(kit.AddressReason(g, address, v1alpha1.ConditionDropped), timeout, tick).Should(Equal(v1alpha1.ReasonNotDropped))
	g.Expect(testkit.Condition(kit.Address(g, address).Status.Conditions, v1alpha1.ConditionDropped).Status).To(Equal(metav1.ConditionFalse))
	g.Eventually(kit.EventsAbout(g, kit.Address(g, address), v1alpha1.EventAddressReportedAgain), timeout, tick).
		Should(ContainElement(ContainSubstring("Service " + ns + "/named reports " + ip + " again")))
	g.Expect(kit.AddressReason(g, address, v1alpha1.ConditionAssociated)()).To(Equal("GapHandoff"))
}

// keys are "namespace/name" of names in ns.
func keys(ns string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ns + "/" + n
	}
	return out
}

// annotated sets one annotation on a Service under construction.
func annotated(key, value string) b.ServiceOption {
	return func(s *corev1.Service) { metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, value) }
}

// TestDroppedAddressOfAPinnedService: a Service the driver pinned, by a
// shared handoff, loses its address for a reason of its own (it names a
// pool MetalLB has not got). The address says Dropped, on it and on the
// Service, stays Bound, and its hold keeps it meanwhile, so no one else
// gets it; once the annotation goes the Service reports it again, the
// hold lets go, and Dropped clears.
func TestDroppedAddressOfAPinnedService(t *testing.T) {
	g := begin(t)
	ns := kit.Namespace(t)
	class, _, _ := mt.Class(t, g, false)
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	bound := kit.Claim(g, ns, "web").Status.Addresses[0]
	ip, address := bound.Address, bound.Name
	kit.Create(g, b.Service(ns, "web", b.ForClaim("web")))
	g.Eventually(lbIngress(ns, "web"), timeout, tick).Should(Equal(ip))
	g.Eventually(kit.AddressReason(g, address, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal("SharedHandoff"))
	g.Expect(kit.AddressReason(g, address, v1alpha1.ConditionDropped)()).To(Equal(v1alpha1.ReasonNotDropped))

	web := kit.Service(g, ns, "web")
	kit.SetAnnotation(g, web, "metallb.io/address-pool", "elsewhere")
	g.Eventually(lbIngress(ns, "web"), timeout, tick).Should(BeEmpty())
	g.Eventually(kit.AddressReason(g, address, v1alpha1.ConditionDropped), timeout, tick).Should(Equal(v1alpha1.ReasonNoLongerReported))
	g.Eventually(kit.EventsAbout(g, kit.Address(g, address), v1alpha1.EventAddressDropped), timeout, tick).
		Should(ContainElement(ContainSubstring("Service " + ns + "/web no longer reports " + ip)))
	g.Eventually(kit.EventsAbout(g, web, v1alpha1.EventAddressDropped), timeout, tick).
		Should(ContainElement(ContainSubstring("no longer reports " + ip)))
	g.Eventually(holders(g, ip), timeout, tick).Should(ConsistOf(HavePrefix(placeholderNS + "/hold-")))
	g.Consistently(func(g Gomega) {
		a := kit.Address(g, address)
		g.Expect(a.Status.Phase).To(Equal(v1alpha1.AddressBound))
		g.Expect(a.Status.AssociatedTo).To(HaveField("Name", "web"))
		g.Expect(testkit.Condition(a.Status.Conditions, v1alpha1.ConditionDropped).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(holders(g, ip)()).To(ConsistOf(HavePrefix(placeholderNS + "/hold-")))
	}, 3*time.Second, tick).Should(Succeed())

	kit.SetAnnotation(g, web, "metallb.io/address-pool", "")
	g.Eventually(holders(g, ip), timeout, tick).Should(ConsistOf(ns + "/web"))
	g.Eventually(kit.AddressReason(g, address, v1alpha1.ConditionDropped), timeout, tick).Should(Equal(v1alpha1.ReasonNotDropped))
	g.Eventually(kit.EventsAbout(g, kit.Address(g, address), v1alpha1.EventAddressReportedAgain), timeout, tick).
		Should(ContainElement(ContainSubstring("Service " + ns + "/web reports " + ip + " again")))
	g.Expect(kit.AddressReason(g, address, v1alpha1.ConditionAssociated)()).To(Equal("SharedHandoff"))
}
