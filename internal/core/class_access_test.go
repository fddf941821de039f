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
package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// labelledNamespace makes a namespace for t, removed when t ends, and labels
// it.
func labelledNamespace(t *testing.T, g Gomega, labels map[string]string) string {
	t.Helper()
	name := kit.Namespace(t)
	ns := &corev1.Namespace{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, ns)).To(Succeed())
	orig := ns.DeepCopy()
	for k, v := range labels {
		metav1.SetMetaDataLabel(&ns.ObjectMeta, k, v)
	}
	g.Expect(k8s.Patch(context.Background(), ns, client.MergeFrom(orig))).To(Succeed())
	return name
}

// refused is the state of a claim its class does not admit.
func refused(reason string) testkit.ClaimState {
	return testkit.ClaimState{Phase: v1alpha1.ClaimPending, Reason: reason}
}

// ledgerOf returns the claims and count of a namespace's usage record for a class.
func ledgerOf(ns, class string) func() []any {
	return func() []any {
		l := &v1alpha1.IPAddressClassUsage{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: class}, l); err != nil {
			return []any{err.Error()}
		}
		names := []string{}
		for _, e := range l.Spec.Claims {
			names = append(names, fmt.Sprintf("%s:%d", e.Name, e.Addresses))
		}
		return []any{names, l.Spec.Addresses}
	}
}

func patchClass(g Gomega, name string, mutate func(*v1alpha1.IPAddressClass)) {
	c := &v1alpha1.IPAddressClass{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
	orig := c.DeepCopy()
	mutate(c)
	g.Expect(k8s.Patch(context.Background(), c, client.MergeFrom(orig))).To(Succeed())
}

func TestNamespaceSelector(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	class := testkit.Name(t)
	public := labelledNamespace(t, g, map[string]string{"tier": "public"})
	internal := labelledNamespace(t, g, map[string]string{"tier": "internal"})
	kit.Make(t, g, b.Class(class, provisioner, b.NamespaceSelector(map[string]string{"tier": "public"})),
		b.Address(class+"-a", "198.18.180.1", class), b.Address(class+"-b", "198.18.180.2", class),
		b.Address(class+"-c", "198.18.180.3", class))
	g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	kit.Create(g, b.Claim(public, "web", b.OfClass(class)), b.Claim(internal, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, public, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(kit.StateOfClaim(g, internal, "web"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassNotAllowed)))
	denied := kit.Claim(g, internal, "web")
	g.Expect(denied.Annotations).NotTo(HaveKey(v1alpha1.AnnotationProvisioner), "a refused claim is never stamped for a driver")
	g.Expect(denied.Finalizers).To(ContainElement(v1alpha1.FinalizerClaimProtection))
	g.Expect(testkit.Reason(denied.Status.Conditions, v1alpha1.ConditionClassResolved)).To(Equal(v1alpha1.ReasonResolved))
	g.Expect(meta.FindStatusCondition(denied.Status.Conditions, v1alpha1.ConditionBound).Message).To(ContainSubstring("tier=public"))
	g.Eventually(kit.EventsAbout(g, denied, v1alpha1.EventClassNotAllowed), timeout, tick).Should(HaveLen(1))

	// Pre-bound to a refused claim, an address is not accepted either.
	g.Expect(kit.Address(g, class+"-c").Status.Phase).To(Equal(v1alpha1.AddressAvailable))
	a := kit.Address(g, class+"-c")
	orig := a.DeepCopy()
	a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: internal, Name: "web"}
	g.Expect(k8s.Patch(context.Background(), a, client.MergeFrom(orig))).To(Succeed())
	g.Consistently(func() any { return kit.Address(g, class+"-c").Spec.ClaimRef.UID }, 2*time.Second, 100*time.Millisecond).Should(BeEmpty())
	g.Expect(kit.StateOfClaim(g, internal, "web")()).To(Equal(refused(v1alpha1.ReasonClassNotAllowed)))

	// Labelling the namespace admits the claim.
	ns := &corev1.Namespace{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: internal}, ns)).To(Succeed())
	nsOrig := ns.DeepCopy()
	ns.Labels["tier"] = "public"
	g.Expect(k8s.Patch(context.Background(), ns, client.MergeFrom(nsOrig))).To(Succeed())
	g.Eventually(kit.StateOfClaim(g, internal, "web"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-c"}}))
	g.Expect(kit.Claim(g, internal, "web").Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProvisioner, provisioner))

	// A stricter selector takes nothing away; a wider one admits waiting claims.
	other := labelledNamespace(t, g, map[string]string{"tier": "other"})
	patchClass(g, class, func(c *v1alpha1.IPAddressClass) {
		c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "none"}}
	})
	kit.Create(g, b.Claim(other, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, other, "web"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassNotAllowed)))
	g.Consistently(func() []v1alpha1.IPAddressClaimPhase {
		return []v1alpha1.IPAddressClaimPhase{kit.Claim(g, public, "web").Status.Phase, kit.Claim(g, internal, "web").Status.Phase}
	}, 2*time.Second, 100*time.Millisecond).Should(Equal([]v1alpha1.IPAddressClaimPhase{v1alpha1.ClaimBound, v1alpha1.ClaimBound}))
	patchClass(g, class, func(c *v1alpha1.IPAddressClass) {
		c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"public", "other"}}}}
	})
	g.Eventually(kit.StateOfClaim(g, other, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
}

func TestLimitCountsAddressesAndWaitsForARelease(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner, b.PerNamespace(2), b.ClassReclaim(v1alpha1.ReclaimRetain)),
		b.Address(class+"-4a", "198.18.181.1", class), b.Address(class+"-4b", "198.18.181.2", class),
		b.Address(class+"-4c", "198.18.181.3", class), b.Address(class+"-6a", "2001:db8:181::1", class))
	g.Eventually(kit.StateOfAddress(g, class+"-6a"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	kit.Create(g, b.Claim(ns, "single", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "single"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(ledgerOf(ns, class)()).To(Equal([]any{[]string{"single:1"}, int32(1)}))

	// A Dual claim counts two: one more than is left.
	kit.Create(g, b.Claim(ns, "dual", b.OfClass(class), b.Family(v1alpha1.Dual)))
	g.Eventually(kit.StateOfClaim(g, ns, "dual"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
	dual := kit.Claim(g, ns, "dual")
	g.Expect(dual.Annotations).NotTo(HaveKey(v1alpha1.AnnotationProvisioner))
	g.Expect(meta.FindStatusCondition(dual.Status.Conditions, v1alpha1.ConditionBound).Message).To(ContainSubstring("holds 1 of the 2 addresses"))
	g.Eventually(kit.EventsAbout(g, dual, v1alpha1.EventClassLimitReached), timeout, tick).Should(HaveLen(1))
	g.Consistently(kit.StateOfAddress(g, class+"-6a"), time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	// Releasing the first claim lets the waiting one in by itself.
	g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, "single"))).To(Succeed())
	g.Eventually(kit.StateOfClaim(g, ns, "dual"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(kit.Claim(g, ns, "dual").Status.Addresses).To(HaveLen(2))
	g.Eventually(ledgerOf(ns, class), timeout, tick).Should(Equal([]any{[]string{"dual:2"}, int32(2)}))

	// Raising the limit lets a waiting claim in by itself.
	kit.Create(g, b.Claim(ns, "third", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "third"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
	patchClass(g, class, func(c *v1alpha1.IPAddressClass) { c.Spec.AddressesPerNamespace = new(int32(3)) })
	g.Eventually(kit.StateOfClaim(g, ns, "third"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

	// The use is a metric, per class and namespace.
	g.Eventually(func() []float64 {
		return []float64{
			metricValue(g, "address_controller_class_addresses_held", map[string]string{"class": class, "namespace": ns}),
			metricValue(g, "address_controller_class_addresses_admitted", map[string]string{"class": class, "namespace": ns}),
			metricValue(g, "address_controller_class_addresses_per_namespace", map[string]string{"class": class}),
		}
	}, timeout, tick).Should(Equal([]float64{3, 3, 3}))
}

func TestConcurrentClaimsCannotBothPassALimitOfOne(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	class := testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner, b.PerNamespace(1)))
	const namespaces, claims = 3, 8
	addrs := make([]client.Object, 0, namespaces*claims)
	for i := range namespaces * claims {
		addrs = append(addrs, b.Address(fmt.Sprintf("%s-%02d", class, i), fmt.Sprintf("198.18.182.%d", i+1), class))
	}
	kit.Make(t, g, addrs...)
	g.Eventually(kit.StateOfAddress(g, addrs[len(addrs)-1].GetName()), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	all := make([]client.Object, 0, namespaces*claims)
	nss := make([]string, 0, namespaces)
	for range namespaces {
		ns := kit.Namespace(t)
		nss = append(nss, ns)
		for i := range claims {
			all = append(all, b.Claim(ns, fmt.Sprintf("c%d", i), b.OfClass(class)))
		}
	}
	kit.CreateConcurrently(g, all...)

	phases := func(ns string) func() map[string]int {
		return func() map[string]int {
			list := &v1alpha1.IPAddressClaimList{}
			g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
			out := map[string]int{}
			for _, c := range list.Items {
				out[string(c.Status.Phase)+"/"+testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound)]++
			}
			return out
		}
	}
	want := map[string]int{"Bound/Bound": 1, "Pending/ClassLimitReached": claims - 1}
	for _, ns := range nss {
		g.Eventually(phases(ns), timeout, tick).Should(Equal(want), "namespace %s", ns)
	}
	boundAddresses := func() int {
		list := &v1alpha1.IPAddressList{}
		g.Expect(k8s.List(context.Background(), list)).To(Succeed())
		n := 0
		for _, a := range list.Items {
			if a.Spec.ClassName == class && a.Spec.ClaimRef != nil {
				n++
			}
		}
		return n
	}
	g.Consistently(boundAddresses, 2*time.Second, 100*time.Millisecond).Should(Equal(namespaces))
	for _, ns := range nss {
		g.Expect(phases(ns)()).To(Equal(want))
		g.Expect(ledgerOf(ns, class)()[1]).To(Equal(int32(1)))
	}
}

func TestLoweredLimitKeepsBoundClaimsAndReportsTheNamespace(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	for i := range 4 {
		kit.Make(t, g, b.Address(fmt.Sprintf("%s-%d", class, i), fmt.Sprintf("198.18.183.%d", i+1), class))
	}
	for _, c := range []string{"a", "b", "c"} {
		kit.Create(g, b.Claim(ns, c, b.OfClass(class)))
		g.Eventually(kit.StateOfClaim(g, ns, c), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	}

	patchClass(g, class, func(c *v1alpha1.IPAddressClass) { c.Spec.AddressesPerNamespace = new(int32(1)) })
	withinLimits := func() []string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionWithinLimits)
		if cond == nil {
			return nil
		}
		return []string{string(cond.Status), cond.Reason, cond.Message}
	}
	g.Eventually(withinLimits, timeout, tick).Should(ContainElements("False", v1alpha1.ReasonNamespacesOverLimit,
		ContainSubstring(ns+" (3/1)")))
	g.Expect(ledgerOf(ns, class)()).To(Equal([]any{[]string{"a:1", "b:1", "c:1"}, int32(3)}))
	for _, c := range []string{"a", "b", "c"} {
		g.Expect(kit.StateOfClaim(g, ns, c)()).To(HaveField("Phase", v1alpha1.ClaimBound), "claim %s keeps its address", c)
	}

	kit.Create(g, b.Claim(ns, "new", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "new"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))

	// Down to the limit the namespace is within it, and still full.
	for _, c := range []string{"a", "b"} {
		g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, c))).To(Succeed())
	}
	g.Eventually(withinLimits, timeout, tick).Should(ContainElements("True", v1alpha1.ReasonWithinLimits))
	g.Consistently(kit.StateOfClaim(g, ns, "new"), 2*time.Second, 100*time.Millisecond).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
	g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, "c"))).To(Succeed())
	g.Eventually(kit.StateOfClaim(g, ns, "new"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

	// Removing the limit removes the condition.
	patchClass(g, class, func(c *v1alpha1.IPAddressClass) { c.Spec.AddressesPerNamespace = nil })
	g.Eventually(withinLimits, timeout, tick).Should(BeNil())
}

// TestAClaimThatFindsItsEntryAfterACrashIsAdmitted lays out its claim and
// ledger before any core sees them, so it runs serially and starts a core of
// its own once they are there (a running core would admit the claim first).
func TestAClaimThatFindsItsEntryAfterACrashIsAdmitted(t *testing.T) {
	g := NewWithT(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner, b.PerNamespace(1)), b.Address(class+"-a", "198.18.184.1", class))
	// The ledger entry is written before the claim exists: as if a pass
	// admitted it and stopped before stamping. A stale entry of a deleted
	// earlier claim of another name fills the ledger as well.
	claim := b.Claim(ns, "web", b.OfClass(class))
	kit.Create(g, claim)
	ledger := &v1alpha1.IPAddressClassUsage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: class},
		Spec: v1alpha1.IPAddressClassUsageSpec{Addresses: 2, Claims: []v1alpha1.AdmittedClaim{
			{Name: "gone", UID: "00000000-0000-0000-0000-000000000000", Addresses: 1},
			{Name: "web", UID: claim.UID, Addresses: 1}}}}
	kit.Create(g, ledger)
	startCore(t)
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

	// A second claim finds the namespace full, drops the stale entry, and
	// still waits: web holds the one address allowed.
	kit.Create(g, b.Claim(ns, "two", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "two"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
	g.Eventually(ledgerOf(ns, class), timeout, tick).Should(Equal([]any{[]string{"web:1"}, int32(1)}))
}

func TestMalformedSelectorRefusesEveryClaimAndSaysSoOnTheClass(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	bad := b.Class(class, provisioner, b.NamespaceSelector(map[string]string{"not a key": "x"}))
	kit.Make(t, g, bad, b.Address(class+"-a", "198.18.185.1", class))
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassNotAllowed)))
	g.Expect(meta.FindStatusCondition(kit.Claim(g, ns, "web").Status.Conditions, v1alpha1.ConditionBound).Message).To(
		ContainSubstring("invalid spec.namespaceSelector"))
	g.Eventually(kit.EventsAbout(g, bad, v1alpha1.EventInvalidNamespaceSelector), timeout, tick).Should(
		ContainElement(ContainSubstring(ns + "/web")))

	// Fixing the selector admits the claim by itself.
	patchClass(g, class, func(c *v1alpha1.IPAddressClass) { c.Spec.NamespaceSelector = &metav1.LabelSelector{} })
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
}
