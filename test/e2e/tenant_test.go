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
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/testkit"
)

// The tenant boundary: class access (namespaceSelector, addressesPerNamespace)
// is what separates tenants, and nothing a tenant can write may cross it.
// Each spec is one attack, made as a tenant would make it: impersonating a
// user bound to the built-in edit role in its own namespace only (the core
// chart aggregates the claims role into edit). Every spec removes what it
// made and waits until it is gone. The ranges are 198.18.<row>.0/24, which
// no other spec uses (the later rows included).

// metallbProvisioner is the MetalLB driver's provisioner name.
const metallbProvisioner = "metallb.drivers.local.sdn.cozystack.io"

// watchFor is how long a spec watches for something that must not happen.
const watchFor = 5 * time.Second

var _ = Describe("Tenant", func() {
	It("forging the provisioner stamp gets no address: refused, stamp removed, ForgedStamp, nothing provisioned", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-forged-stamp"
		outside, outsider := t.tenant(ctx, "tenant-forged-stamp", nil)
		full, insider := t.tenant(ctx, "tenant-forged-stamp-full", map[string]string{"tenant-forged-stamp": "admitted"})
		t.class(ctx, class, `
  namespaceSelector:
    matchLabels: {tenant-forged-stamp: admitted}
  addressesPerNamespace: 1
  parameters: {addresses: ["198.18.1.0/29"]}
`)

		By("a namespace the class does not select")
		asTenant(ctx, outsider, forgedClaimYAML(outside, "forged", class), "create", "-f", "-")
		expectForgeryRefused(outside, "forged", class, v1alpha1.ReasonClassNotAllowed)

		By("a namespace the class selects, at its addressesPerNamespace limit")
		asTenant(ctx, insider, testkit.ClaimYAML(full, "first", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, full, "first"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		asTenant(ctx, insider, forgedClaimYAML(full, "forged", class), "create", "-f", "-")
		expectForgeryRefused(full, "forged", class, v1alpha1.ReasonClassLimitReached)
		Expect(addressesOfClass(class)).To(HaveLen(1), "only the admitted claim's address")
		Expect(ledgerClaims(full, class)()).To(Equal([]string{"first"}))
	})

	It("re-targeting a waiting claim to a class it may not use: re-admitted, refused, out of the old ledger", func(ctx SpecContext) {
		t := newTidy()
		const open, closed = "tenant-retarget-open", "tenant-retarget-closed"
		ns, user := t.tenant(ctx, "tenant-retarget", nil)
		t.class(ctx, open, `
  addressesPerNamespace: 4
  parameters: {addresses: ["198.18.2.1/32"]}
`)
		t.class(ctx, closed, `
  namespaceSelector:
    matchLabels: {tenant-retarget: admitted}
  parameters: {addresses: ["198.18.2.8/29"]}
`)

		By("the open class's only address is bound to another claim")
		apply(ctx, testkit.ClaimYAML(ns, "occupier", open))
		Eventually(kit.StateOfClaim(Default, ns, "occupier"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

		By("the tenant's claim is admitted to the open class and waits for an address")
		asTenant(ctx, user, testkit.ClaimYAML(ns, "web", open), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonWaitingForProvisioning}))
		Expect(kit.Claim(Default, ns, "web").Status.AdmittedClassName).To(Equal(open))
		Eventually(ledgerClaims(ns, open), timeout, tick).Should(Equal([]string{"occupier", "web"}))
		web := claimUIDs(ns, "web")

		By("the tenant re-targets it to the class that does not select its namespace")
		asTenant(ctx, user, "", "-n", ns, "patch", "ipaddressclaims.local.sdn.cozystack.io", "web", "--type=merge",
			"-p", `{"spec":{"className":"`+closed+`"}}`)
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonClassNotAllowed}))
		Eventually(ledgerClaims(ns, open), timeout, tick).Should(Equal([]string{"occupier"}))
		claim := kit.Claim(Default, ns, "web")
		Expect(claim.Status.AdmittedClassName).To(BeEmpty())
		Expect(claim.Annotations).NotTo(HaveKey(v1alpha1.AnnotationProvisioner))
		footprint := func() []string { return append(classFootprint(closed, web), classFootprint(open, web)...) }
		Eventually(footprint, timeout, tick).Should(BeEmpty(), "the open class's allocation placeholder goes too")
		Consistently(footprint, watchFor, tick).Should(BeEmpty())

		By("the open class's address comes free: the re-targeted claim does not get it")
		Expect(kit.Delete(ctx, kit.Claim(Default, ns, "occupier"))).To(Succeed())
		Eventually(func() []v1alpha1.IPAddress { return addressesOfClass(open) }, timeout, tick).Should(BeEmpty())
		Consistently(footprint, watchFor, tick).Should(BeEmpty())
		Expect(kit.StateOfClaim(Default, ns, "web")()).To(HaveField("Reason", v1alpha1.ReasonClassNotAllowed))
		Expect(kit.EventsAbout(Default, claim, v1alpha1.EventForgedStamp)()).To(BeEmpty(),
			"the stamp the open class left was the core's own")
	})

	It("writing what proves admission is forbidden: claim status, ledgers, addresses, classes", func(ctx SpecContext) {
		t := newTidy()
		const open, closed = "tenant-status-open", "tenant-status-closed"
		ns, user := t.tenant(ctx, "tenant-status", nil)
		t.class(ctx, open, `
  addressesPerNamespace: 1
  parameters: {addresses: ["198.18.3.0/30"]}
`)
		t.class(ctx, closed, `
  namespaceSelector:
    matchLabels: {tenant-status: admitted}
  parameters: {addresses: ["198.18.3.8/30"]}
`)

		By("a claim created with a status block claiming admission and an address: the status is dropped")
		asTenant(ctx, user, testkit.ClaimYAML(ns, "forged", closed)+`
status:
  phase: Bound
  className: `+closed+`
  admittedClassName: `+closed+`
  addresses: [{name: ip-198-18-3-9, address: 198.18.3.9}]
`, "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "forged"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonClassNotAllowed}))
		forged := claimUIDs(ns, "forged")
		unadmitted := func() []string {
			c := kit.Claim(Default, ns, "forged")
			return append(classFootprint(closed, forged), c.Status.AdmittedClassName, fmt.Sprint(c.Status.Addresses))
		}
		Consistently(unadmitted, watchFor, tick).Should(Equal([]string{"", "[]"}))

		By("the status subresource is the core's")
		out, err := kubectl(ctx, "", "--as", user, "-n", ns, "patch", "ipaddressclaims.local.sdn.cozystack.io", "forged",
			"--subresource=status", "--type=merge", "-p", `{"status":{"admittedClassName":"`+closed+`"}}`)
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(beForbidden(user, "patch", `"ipaddressclaims/status"`))

		By("a status written through the claim itself is ignored")
		asTenant(ctx, user, "", "-n", ns, "patch", "ipaddressclaims.local.sdn.cozystack.io", "forged",
			"--type=merge", "-p", `{"status":{"admittedClassName":"`+closed+`","phase":"Bound"}}`)
		Consistently(unadmitted, watchFor, tick).Should(Equal([]string{"", "[]"}))
		Expect(kit.StateOfClaim(Default, ns, "forged")()).To(HaveField("Reason", v1alpha1.ReasonClassNotAllowed))

		By("the ledger that counts the namespace's addresses is the core's")
		asTenant(ctx, user, testkit.ClaimYAML(ns, "web", open), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		Eventually(ledgerClaims(ns, open), timeout, tick).Should(Equal([]string{"web"}))
		for _, attempt := range []struct {
			verb  string
			args  []string
			stdin string
		}{
			{"delete", []string{"delete", "ipaddressclassusages.local.sdn.cozystack.io", open}, ""},
			{"patch", []string{"patch", "ipaddressclassusages.local.sdn.cozystack.io", open, "--type=merge",
				"-p", `{"spec":{"claims":null,"addresses":0}}`}, ""},
			{"create", []string{"create", "-f", "-"}, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClassUsage
metadata: {name: ` + closed + `, namespace: ` + ns + `}
spec:
  addresses: 1
  claims: [{name: forged, uid: ` + uidOf(forged) + `, addresses: 1}]
`},
		} {
			out, err := kubectl(ctx, attempt.stdin, append([]string{"--as", user, "-n", ns}, attempt.args...)...)
			Expect(err).To(HaveOccurred(), out)
			Expect(out).To(beForbidden(user, attempt.verb, `"ipaddressclassusages"`))
		}
		Expect(ledgerClaims(ns, open)()).To(Equal([]string{"web"}))

		By("addresses and classes are cluster-scoped and the admin's")
		out, err = kubectl(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddress
metadata: {name: ip-198-18-3-9}
spec:
  address: 198.18.3.9
  className: `+closed+`
  claimRef: {namespace: `+ns+`, name: forged}
  source: {fromClass: {}}
`, "--as", user, "create", "-f", "-")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(beForbidden(user, "create", `"ipaddresses"`))
		out, err = kubectl(ctx, "", "--as", user, "patch", "ipaddressclasses.local.sdn.cozystack.io", closed,
			"--type=merge", "-p", `{"spec":{"namespaceSelector":null}}`)
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(beForbidden(user, "patch", `"ipaddressclasses"`))

		Consistently(unadmitted, watchFor, tick).Should(Equal([]string{"", "[]"}))
		Expect(kit.StateOfClaim(Default, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	})

	It("pre-binding an address of a class it may not use: refused, the address stays Available", func(ctx SpecContext) {
		t := newTidy()
		const class, address = "tenant-prebind", "ip-198-18-4-5"
		ns, user := t.tenant(ctx, "tenant-prebind", nil)
		t.class(ctx, class, `
  namespaceSelector:
    matchLabels: {tenant-prebind: admitted}
  parameters: {addresses: ["198.18.4.0/29"]}
`)
		apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddress
metadata: {name: `+address+`}
spec:
  address: 198.18.4.5
  className: `+class+`
  reclaimPolicy: Delete
  source: {fromClass: {}}
`)
		available := testkitAddress(v1alpha1.AddressAvailable, v1alpha1.ReasonAvailable, "")
		Eventually(kit.StateOfAddress(Default, address), timeout, tick).Should(Equal(available))

		asTenant(ctx, user, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: web, namespace: `+ns+`}
spec: {className: `+class+`, addressName: `+address+`}
`, "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonClassNotAllowed}))
		web := claimUIDs(ns, "web")
		Consistently(func() []any {
			return []any{kit.StateOfAddress(Default, address)(), classFootprint(class, web)}
		}, watchFor, tick).Should(Equal([]any{available, []string(nil)}))
		Expect(kit.Claim(Default, ns, "web").Status.AdmittedClassName).To(BeEmpty())
	})

	It("drawing from a class's MetalLB pool directly gets an address of its range with the default install", func(ctx SpecContext) {
		// This is the open hole of the default install, recorded as it is:
		// MetalLB serves any Service that names a pool, whatever the class
		// allows (autoAssign: false keeps out only the Services that name no
		// pool), and the driver, finding no IPAddress for what MetalLB gave,
		// sees nothing to report. The driver chart's admissionPolicy.enabled=true
		// reserves metallb.io/address-pool (and the other fields steering
		// MetalLB) to the driver and the allowlisted admins, which closes it;
		// test/charts (service_policy_test.go) tests that policy.
		t := newTidy()
		const class = "tenant-pool"
		ns, user := t.tenant(ctx, "tenant-pool", nil)
		t.class(ctx, class, `
  namespaceSelector:
    matchLabels: {tenant-pool: admitted}
  parameters: {addresses: ["198.18.5.0/29"]}
`)
		Eventually(func() metav1.ConditionStatus {
			return testkit.Condition(classOf(class).Status.Conditions, v1alpha1.ConditionRendered).Status
		}, timeout, tick).Should(Equal(metav1.ConditionTrue), "the pool is rendered")

		asTenant(ctx, user, `
apiVersion: v1
kind: Service
metadata:
  name: steal
  namespace: `+ns+`
  annotations: {metallb.io/address-pool: iad-`+class+`}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: steal}
  ports: [{port: 80}]
`, "create", "-f", "-")
		// MetalLB hands out the lowest free address of the pool.
		const stolen = "198.18.5.0"
		Eventually(func() []string { return ingressOf(ns, "steal") }, timeout, tick).Should(Equal([]string{stolen}),
			"MetalLB serves the tenant's Service from the pool of a class that does not select its namespace")

		By("the ledger does not know it: no IPAddress, no conflict, the address stays with the Service")
		Consistently(func() []any {
			return []any{ingressOf(ns, "steal"), addressesOfClass(class),
				kit.WarningsAbout(Default, kit.Service(Default, ns, "steal"))()}
		}, watchFor, tick).Should(Equal([]any{[]string{stolen}, []v1alpha1.IPAddress(nil), []string(nil)}))
	})

	It("pinning an address held for another tenant's claim gets nothing; the hold keeps it", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-pin"
		victimNS, victim := t.tenant(ctx, "tenant-pin-victim", nil)
		ns, user := t.tenant(ctx, "tenant-pin", nil)
		t.class(ctx, class, `
  parameters: {addresses: ["198.18.6.0/29"]}
`)
		asTenant(ctx, victim, testkit.ClaimYAML(victimNS, "web", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, victimNS, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, victimNS, "web").Status.Addresses[0]
		placeholderHolds := ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/"))
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(placeholderHolds)

		asTenant(ctx, user, `
apiVersion: v1
kind: Service
metadata:
  name: pinned
  namespace: `+ns+`
  annotations: {metallb.io/loadBalancerIPs: `+addr.Address+`}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: pinned}
  ports: [{port: 80}]
`, "create", "-f", "-")
		svc := kit.Service(Default, ns, "pinned")
		// MetalLB names the hold in its refusal: the address is in use by a
		// Service of another sharing key.
		Eventually(kit.WarningsAbout(Default, svc), timeout, tick).Should(ContainElement(And(
			HavePrefix("AllocationFailed: "), ContainSubstring("address also in use by "+h.PlaceholderNamespace()+"/"))),
			"MetalLB saw the Service and refused it")
		Consistently(func() []any {
			return []any{ingressOf(ns, "pinned"), holders(addr.Address),
				kit.StateOfClaim(Default, victimNS, "web")().Phase, kit.StateOfAddress(Default, addr.Name)()}
		}, watchFor, tick).Should(HaveExactElements(BeEmpty(), placeholderHolds, Equal(v1alpha1.ClaimBound),
			Equal(testkitAddress(v1alpha1.AddressBound, v1alpha1.ReasonBound, victimNS+"/web"))))
	})

	It("naming another namespace's claim on a Service is refused: AssociationRefused, no pin", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-assoc"
		victimNS, victim := t.tenant(ctx, "tenant-assoc-victim", nil)
		ns, user := t.tenant(ctx, "tenant-assoc", nil)
		t.class(ctx, class, `
  parameters: {addresses: ["198.18.7.0/29"]}
`)
		asTenant(ctx, victim, testkit.ClaimYAML(victimNS, "web", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, victimNS, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, victimNS, "web").Status.Addresses[0]
		placeholderHolds := ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/"))
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(placeholderHolds)

		// By its bare name, which only the Service's own namespace is
		// searched for, and qualified with the victim's namespace.
		for svc, claim := range map[string]string{"borrow": "web", "borrow-qualified": victimNS + "/web"} {
			asTenant(ctx, user, `
apiVersion: v1
kind: Service
metadata:
  name: `+svc+`
  namespace: `+ns+`
  annotations: {local.sdn.cozystack.io/ip-address-claim: "`+claim+`"}
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: `+svc+`}
  ports: [{port: 80}]
`, "create", "-f", "-")
			Eventually(kit.EventsAbout(Default, kit.Service(Default, ns, svc), v1alpha1.EventAssociationRefused), timeout, tick).Should(
				ContainElement(ContainSubstring("IPAddressClaim %s not found in namespace %s", claim, ns)), svc)
		}
		Consistently(func() []any {
			var out []any
			for _, svc := range []string{"borrow", "borrow-qualified"} {
				s := kit.Service(Default, ns, svc)
				out = append(out, ingressOf(ns, svc), s.Annotations["metallb.io/loadBalancerIPs"], s.Annotations[v1alpha1.AnnotationPinnedBy])
			}
			return append(out, kit.Address(Default, addr.Name).Status.AssociatedTo, holders(addr.Address))
		}, watchFor, tick).Should(HaveExactElements(BeEmpty(), BeEmpty(), BeEmpty(), BeEmpty(), BeEmpty(), BeEmpty(),
			BeNil(), placeholderHolds))
		Expect(kit.StateOfClaim(Default, victimNS, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	})

	It("claiming a family the class cannot serve: FamilyNotServed, nothing reserved", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-family"
		ns, user := t.tenant(ctx, "tenant-family", nil)
		t.class(ctx, class, `
  parameters: {addresses: ["198.18.8.0/29"]}
`)
		Eventually(func() []v1alpha1.IPFamily {
			c := &v1alpha1.IPAddressClass{}
			Expect(kit.Get(ctx, client.ObjectKey{Name: class}, c)).To(Succeed())
			return c.Status.Families
		}, timeout, tick).Should(Equal([]v1alpha1.IPFamily{v1alpha1.IPv4}), "the driver reports what the class serves")

		for i := range 3 {
			asTenant(ctx, user, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: v6-`+fmt.Sprint(i)+`, namespace: `+ns+`}
spec: {className: `+class+`, family: IPv6}
`, "create", "-f", "-")
		}
		for i := range 3 {
			Eventually(kit.StateOfClaim(Default, ns, fmt.Sprint("v6-", i)), timeout, tick).Should(Equal(
				testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonFamilyNotServed}))
		}
		uids := claimUIDs(ns, "v6-0", "v6-1", "v6-2")
		Consistently(func() []string { return classFootprint(class, uids) }, watchFor, tick).Should(BeEmpty(),
			"no placeholder is left behind for a family the class cannot serve")
	})

	It("reusing a sharing key after the claim is gone shares nothing: the Released address's hold has a new key", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-old-key"
		ns, user := t.tenant(ctx, "tenant-old-key", nil)
		t.classWith(ctx, class, v1alpha1.ReclaimRetain, `
  parameters: {addresses: ["198.18.9.0/29"]}
`)
		asTenant(ctx, user, testkit.ClaimYAML(ns, "web", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, ns, "web").Status.Addresses[0]
		asTenant(ctx, user, testkit.ServiceYAML(ns, "carrier", map[string]string{v1alpha1.AnnotationIPAddressClaim: "web"}), "create", "-f", "-")
		Eventually(func() []string { return ingressOf(ns, "carrier") }, timeout, tick).Should(Equal([]string{addr.Address}))

		By("the tenant reads the key the driver wrote on its own Service")
		key, err := kubectl(ctx, "", "--as", user, "-n", ns, "get", "service", "carrier",
			"-o", `jsonpath={.metadata.annotations.metallb\.io/allow-shared-ip}`)
		Expect(err).NotTo(HaveOccurred(), key)
		Expect(key).To(HavePrefix("iad-"), "a shared handoff carries the claim's key")

		By("the claim is deleted: the carrier loses pin and key, the address is Released and held under a new key")
		asTenant(ctx, user, "", "-n", ns, "delete", "ipaddressclaims.local.sdn.cozystack.io", "web")
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
		Eventually(func() []string {
			var left []string
			for k := range kit.Service(Default, ns, "carrier").Annotations {
				if strings.HasPrefix(k, "metallb.io/") || k == v1alpha1.AnnotationPinnedBy || strings.HasSuffix(k, "/sharing-key") {
					left = append(left, k)
				}
			}
			return left
		}, timeout, tick).Should(BeEmpty())
		placeholderHolds := ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/"))
		Eventually(func() []string { return holders(addr.Address) }, timeout, tick).Should(placeholderHolds)

		By("a Service pinned to the address with the old key gets nothing")
		asTenant(ctx, user, testkit.ServiceYAML(ns, "reuse", map[string]string{
			"metallb.io/loadBalancerIPs": addr.Address, "metallb.io/allow-shared-ip": key}), "create", "-f", "-")
		Eventually(kit.WarningsAbout(Default, kit.Service(Default, ns, "reuse")), timeout, tick).Should(
			ContainElement(HavePrefix("AllocationFailed: ")), "MetalLB saw the Service and refused it")
		Consistently(func() []any {
			return []any{ingressOf(ns, "reuse"), holders(addr.Address), kit.StateOfAddress(Default, addr.Name)().Phase}
		}, watchFor, tick).Should(HaveExactElements(BeEmpty(), placeholderHolds, Equal(v1alpha1.AddressReleased)))
	})

	It("pre-binding a recycled address with the default install: admitted and counted like any claim", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-recycled"
		formerNS, former := t.tenant(ctx, "tenant-recycled-former", nil)
		ns, user := t.tenant(ctx, "tenant-recycled", nil)
		t.classWith(ctx, class, v1alpha1.ReclaimRetain, `
  addressesPerNamespace: 1
  parameters: {addresses: ["198.18.10.0/29"]}
`)
		asTenant(ctx, former, testkit.ClaimYAML(formerNS, "web", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, formerNS, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, formerNS, "web").Status.Addresses[0]
		asTenant(ctx, former, "", "-n", formerNS, "delete", "ipaddressclaims.local.sdn.cozystack.io", "web")
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))

		By("the admin recycles it; another tenant names it")
		out, err := kubectl(ctx, "", "patch", "ipaddresses.local.sdn.cozystack.io", addr.Name, "--type=merge", "-p", `{"spec":{"claimRef":null}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
		asTenant(ctx, user, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: named, namespace: `+ns+`}
spec: {className: `+class+`, addressName: `+addr.Name+`}
`, "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "named"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{addr.Name}}))
		Expect(kit.Claim(Default, ns, "named").Status.AdmittedClassName).To(Equal(class))
		Eventually(ledgerClaims(ns, class), timeout, tick).Should(Equal([]string{"named"}), "it counts against the limit")

		By("the limit holds for the next claim of the namespace")
		asTenant(ctx, user, testkit.ClaimYAML(ns, "more", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "more"), timeout, tick).Should(Equal(
			testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonClassLimitReached}))
	})

	It("sharing its own address with a second Service with the default install: the driver reports the second Service", func(ctx SpecContext) {
		t := newTidy()
		const class = "tenant-own-key"
		ns, user := t.tenant(ctx, "tenant-own-key", nil)
		t.class(ctx, class, `
  parameters: {addresses: ["198.18.11.0/29"]}
`)
		asTenant(ctx, user, testkit.ClaimYAML(ns, "web", class), "create", "-f", "-")
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		addr := kit.Claim(Default, ns, "web").Status.Addresses[0]
		asTenant(ctx, user, testkit.ServiceYAML(ns, "carrier", map[string]string{v1alpha1.AnnotationIPAddressClaim: "web"}), "create", "-f", "-")
		Eventually(func() []string { return ingressOf(ns, "carrier") }, timeout, tick).Should(Equal([]string{addr.Address}))
		key := kit.Service(Default, ns, "carrier").Annotations["metallb.io/allow-shared-ip"]
		Expect(key).To(HavePrefix("iad-"))

		By("a second Service of the tenant pinned to the address with the claim's key")
		second := strings.Replace(testkit.ServiceYAML(ns, "second", map[string]string{
			"metallb.io/loadBalancerIPs": addr.Address, "metallb.io/allow-shared-ip": key}), "port: 80", "port: 81", 1)
		asTenant(ctx, user, second, "create", "-f", "-")
		Eventually(func() []string { return ingressOf(ns, "second") }, timeout, tick).Should(Equal([]string{addr.Address}),
			"MetalLB shares the address: the key matches")
		Eventually(kit.StateOfAddress(Default, addr.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressConflict))
		Eventually(kit.EventsAbout(Default, kit.Service(Default, ns, "second"), v1alpha1.EventAddressConflict), timeout, tick).Should(
			ContainElement(ContainSubstring(addr.Address)))
		Expect(ingressOf(ns, "carrier")).To(Equal([]string{addr.Address}), "the claim's own carrier keeps it")
	})
})

// tenant creates a namespace with labels and a user of the same name bound
// to the built-in edit role there, and waits until the role (aggregated by
// kube-controller-manager) lets the user claim addresses in it.
func (t *tidy) tenant(ctx context.Context, name string, labels map[string]string) (ns, user string) {
	GinkgoHelper()
	ns, user = name, name
	t.own(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		keys = append(keys, k+": "+v)
	}
	slices.Sort(keys)
	apply(ctx, `
apiVersion: v1
kind: Namespace
metadata:
  name: `+ns+`
  labels: {`+strings.Join(keys, ", ")+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: `+user+`, namespace: `+ns+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`)
	Eventually(func() (string, error) {
		return kubectl(ctx, "", "--as", user, "-n", ns, "auth", "can-i", "create", "ipaddressclaims.local.sdn.cozystack.io")
	}, timeout, tick).Should(HavePrefix("yes"))
	return ns, user
}

// asTenant runs kubectl as user, by impersonation, and expects it to succeed.
func asTenant(ctx context.Context, user, stdin string, args ...string) {
	GinkgoHelper()
	out, err := kubectl(ctx, stdin, append([]string{"--as", user}, args...)...)
	Expect(err).NotTo(HaveOccurred(), out)
}

// beForbidden matches kubectl's report that RBAC refused user verb on
// resource (quoted, as the API server quotes it).
func beForbidden(user, verb, resource string) OmegaMatcher {
	return And(ContainSubstring("(Forbidden)"),
		ContainSubstring(fmt.Sprintf(`User %q cannot %s resource %s`, user, verb, resource)))
}

// forgedClaimYAML is a claim of class carrying the provisioner stamp the
// core writes once it admitted a claim.
func forgedClaimYAML(ns, name, class string) string {
	return `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata:
  name: ` + name + `
  namespace: ` + ns + `
  annotations: {` + v1alpha1.AnnotationProvisioner + `: ` + metallbProvisioner + `}
spec: {className: ` + class + `}
`
}

// expectForgeryRefused checks that the core refused a claim carrying a
// forged stamp with reason, reported the stamp and removed it, recorded no
// admission, and that nothing was provisioned for it.
func expectForgeryRefused(ns, name, class, reason string) {
	GinkgoHelper()
	Eventually(kit.StateOfClaim(Default, ns, name), timeout, tick).Should(Equal(
		testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: reason}))
	claim := kit.Claim(Default, ns, name)
	Eventually(kit.WarningsAbout(Default, claim), timeout, tick).Should(ContainElement(And(
		HavePrefix(v1alpha1.EventForgedStamp+": "), ContainSubstring(v1alpha1.AnnotationProvisioner))))
	Eventually(func() map[string]string { return kit.Claim(Default, ns, name).Annotations }, timeout, tick).ShouldNot(
		HaveKey(v1alpha1.AnnotationProvisioner))
	uids := claimUIDs(ns, name)
	Consistently(func() []any {
		c := kit.Claim(Default, ns, name)
		return []any{c.Annotations[v1alpha1.AnnotationProvisioner], c.Status.AdmittedClassName,
			testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound), classFootprint(class, uids)}
	}, watchFor, tick).Should(Equal([]any{"", "", reason, []string(nil)}))
}

// claimUIDs maps the UIDs of a namespace's named claims to their keys, as
// classFootprint takes them.
func claimUIDs(ns string, names ...string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, n := range names {
		out[string(kit.Claim(Default, ns, n).UID)] = ns + "/" + n
	}
	return out
}

// uidOf is the one UID of claimUIDs's answer.
func uidOf(uids map[string]string) string {
	for uid := range uids {
		return uid
	}
	return ""
}

// ledgerClaims names the claims a namespace's ledger for class lists; nil
// while there is no ledger.
func ledgerClaims(ns, class string) func() []string {
	return func() []string {
		l := &v1alpha1.IPAddressClassUsage{}
		err := kit.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: class}, l)
		if apierrors.IsNotFound(err) {
			return nil
		}
		Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, e := range l.Spec.Claims {
			out = append(out, e.Name)
		}
		slices.Sort(out)
		return out
	}
}

// classOf reads a class.
func classOf(name string) *v1alpha1.IPAddressClass {
	GinkgoHelper()
	c := &v1alpha1.IPAddressClass{}
	Expect(kit.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
	return c
}
