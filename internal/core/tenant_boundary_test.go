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
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// What a tenant can write (its claims' spec and metadata) never admits a
// claim: these tests try what a tenant would, against the core alone.

// stamped is a claim option carrying a provisioner stamp, as a tenant can
// write one.
func stamped(provisioner string) b.ClaimOption {
	return func(c *v1alpha1.IPAddressClaim) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[v1alpha1.AnnotationProvisioner] = provisioner
	}
}

// admission is what a claim's status and stamp say of its admission.
func admission(g Gomega, ns, name string) func() []string {
	return func() []string {
		c := kit.Claim(g, ns, name)
		return []string{c.Status.AdmittedClassName, c.Annotations[v1alpha1.AnnotationProvisioner]}
	}
}

// forgeries counts the ForgedStamp events about a claim, repeats of one
// event (a series) included.
func forgeries(g Gomega, claim client.Object) func() int {
	return func() int {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(claim.GetNamespace()))).To(Succeed())
		n := 0
		for _, e := range list.Items {
			if e.Regarding.UID == claim.GetUID() && e.Reason == v1alpha1.EventForgedStamp {
				n++
				if e.Series != nil {
					n += int(e.Series.Count) - 1
				}
			}
		}
		return n
	}
}

func TestAForgedStampAdmitsNothing(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	class := testkit.Name(t)
	outside := labelledNamespace(t, g, map[string]string{"tier": "internal"})
	full := labelledNamespace(t, g, map[string]string{"tier": "public"})
	kit.Make(t, g, b.Class(class, provisioner, b.NamespaceSelector(map[string]string{"tier": "public"}), b.PerNamespace(1)),
		b.Address(class+"-a", "198.18.186.1", class), b.Address(class+"-b", "198.18.186.2", class),
		b.Address(class+"-c", "198.18.186.3", class))
	g.Eventually(kit.StateOfAddress(g, class+"-c"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	// Outside the selector.
	kit.Create(g, b.Claim(outside, "web", b.OfClass(class), stamped(provisioner)))
	g.Eventually(kit.StateOfClaim(g, outside, "web"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassNotAllowed)))
	g.Eventually(admission(g, outside, "web"), timeout, tick).Should(Equal([]string{"", ""}), "the stamp is taken off")
	g.Eventually(kit.EventsAbout(g, kit.Claim(g, outside, "web"), v1alpha1.EventForgedStamp), timeout, tick).Should(
		ConsistOf(ContainSubstring("the core did not write")))

	// At the limit: the namespace holds its one address already.
	kit.Create(g, b.Claim(full, "first", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, full, "first"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Expect(admission(g, full, "first")()).To(Equal([]string{class, provisioner}))
	kit.Create(g, b.Claim(full, "second", b.OfClass(class), stamped(provisioner)))
	g.Eventually(kit.StateOfClaim(g, full, "second"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
	g.Eventually(admission(g, full, "second"), timeout, tick).Should(Equal([]string{"", ""}))
	g.Eventually(kit.EventsAbout(g, kit.Claim(g, full, "second"), v1alpha1.EventForgedStamp), timeout, tick).Should(HaveLen(1))

	// Forging it again, later, changes nothing either.
	kit.SetAnnotation(g, kit.Claim(g, outside, "web"), v1alpha1.AnnotationProvisioner, provisioner)
	g.Eventually(forgeries(g, kit.Claim(g, outside, "web")), timeout, tick).Should(Equal(2))
	g.Eventually(admission(g, outside, "web"), timeout, tick).Should(Equal([]string{"", ""}))
	g.Consistently(func() []v1alpha1.IPAddressPhase {
		return []v1alpha1.IPAddressPhase{kit.Address(g, class+"-b").Status.Phase, kit.Address(g, class+"-c").Status.Phase}
	}, 2*time.Second, 100*time.Millisecond).Should(Equal([]v1alpha1.IPAddressPhase{v1alpha1.AddressAvailable, v1alpha1.AddressAvailable}))
	g.Expect(ledgerOf(full, class)()).To(Equal([]any{[]string{"first:1"}, int32(1)}))
}

func TestRetargetingReadmitsAndReleasesTheOldLedger(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	name := testkit.Name(t)
	open, closed := name+"-open", name+"-closed"
	ns := labelledNamespace(t, g, map[string]string{"tier": "internal"})
	// The open class has no address, so its claim waits for a driver that
	// never comes; its limit keeps a ledger.
	kit.Make(t, g, b.Class(open, provisioner, b.PerNamespace(5)),
		b.Class(closed, provisioner, b.NamespaceSelector(map[string]string{"tier": "public"})),
		b.Address(closed+"-a", "198.18.187.1", closed))
	g.Eventually(kit.StateOfAddress(g, closed+"-a"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	kit.Create(g, b.Claim(ns, "web", b.OfClass(open)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
	g.Eventually(admission(g, ns, "web"), timeout, tick).Should(Equal([]string{open, provisioner}))
	g.Expect(ledgerOf(ns, open)()).To(Equal([]any{[]string{"web:1"}, int32(1)}))

	// Same driver, restricted class: re-admitted, refused, the old place given up.
	claim := kit.Claim(g, ns, "web")
	orig := claim.DeepCopy()
	claim.Spec.ClassName = closed
	g.Expect(k8s.Patch(context.Background(), claim, client.MergeFrom(orig))).To(Succeed())
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassNotAllowed)))
	g.Eventually(admission(g, ns, "web"), timeout, tick).Should(Equal([]string{"", ""}))
	g.Eventually(ledgerOf(ns, open), timeout, tick).Should(Equal([]any{[]string{}, int32(0)}))
	g.Expect(kit.EventsAbout(g, claim, v1alpha1.EventForgedStamp)()).To(BeEmpty(), "the stamp of the old class was the core's own")
	g.Consistently(kit.StateOfAddress(g, closed+"-a"), 2*time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	// Back to the open class: admitted there again.
	claim = kit.Claim(g, ns, "web")
	orig = claim.DeepCopy()
	claim.Spec.ClassName = open
	g.Expect(k8s.Patch(context.Background(), claim, client.MergeFrom(orig))).To(Succeed())
	g.Eventually(admission(g, ns, "web"), timeout, tick).Should(Equal([]string{open, provisioner}))
	g.Eventually(ledgerOf(ns, open), timeout, tick).Should(Equal([]any{[]string{"web:1"}, int32(1)}))
}

func TestRetargetingAndCreatingAtALimitOfOneAdmitsOne(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	name := testkit.Name(t)
	open, limited := name+"-open", name+"-one"
	ns := kit.Namespace(t)
	kit.Make(t, g, b.Class(open, provisioner), b.Class(limited, provisioner, b.PerNamespace(1)))
	const n = 6
	for i := range n {
		kit.Create(g, b.Claim(ns, fmt.Sprintf("moved-%d", i), b.OfClass(open)))
	}
	for i := range n {
		g.Eventually(admission(g, ns, fmt.Sprintf("moved-%d", i)), timeout, tick).Should(Equal([]string{open, provisioner}))
	}

	// Half re-targeted, half created, all at once.
	created := make([]client.Object, 0, n)
	for i := range n {
		created = append(created, b.Claim(ns, fmt.Sprintf("new-%d", i), b.OfClass(limited)))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		kit.CreateConcurrently(g, created...)
	}()
	for i := range n {
		claim := kit.Claim(g, ns, fmt.Sprintf("moved-%d", i))
		orig := claim.DeepCopy()
		claim.Spec.ClassName = limited
		g.Expect(k8s.Patch(context.Background(), claim, client.MergeFrom(orig))).To(Succeed())
	}
	<-done

	admitted := func() []string {
		list := &v1alpha1.IPAddressClaimList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, c := range list.Items {
			if c.AdmittedTo() == limited {
				out = append(out, c.Name)
			}
		}
		return out
	}
	waiting := func() int {
		list := &v1alpha1.IPAddressClaimList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
		k := 0
		for _, c := range list.Items {
			if testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound) == v1alpha1.ReasonClassLimitReached {
				k++
			}
		}
		return k
	}
	g.Eventually(waiting, timeout, tick).Should(Equal(2*n - 1))
	g.Consistently(admitted, 2*time.Second, 100*time.Millisecond).Should(HaveLen(1))
	g.Expect(ledgerOf(ns, limited)()[1]).To(Equal(int32(1)))
	g.Expect(ledgerOf(ns, limited)()[0]).To(ConsistOf(admitted()[0] + ":1"))
}

func TestADeletedLedgerIsRebuiltFromTheClaimsItCounts(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner, b.PerNamespace(3)),
		b.Address(class+"-a", "198.18.188.1", class), b.Address(class+"-b", "198.18.188.2", class))
	for _, c := range []string{"a", "b"} {
		kit.Create(g, b.Claim(ns, c, b.OfClass(class)))
		g.Eventually(kit.StateOfClaim(g, ns, c), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	}
	kit.Create(g, b.Claim(ns, "waiting", b.OfClass(class)))
	g.Eventually(ledgerOf(ns, class), timeout, tick).Should(Equal([]any{[]string{"a:1", "b:1", "waiting:1"}, int32(3)}))

	ledger := &v1alpha1.IPAddressClassUsage{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: class}, ledger)).To(Succeed())
	g.Expect(k8s.Delete(context.Background(), ledger)).To(Succeed())
	g.Eventually(func() bool {
		l := &v1alpha1.IPAddressClassUsage{}
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: class}, l)
		return err == nil && l.UID != ledger.UID
	}, timeout, tick).Should(BeTrue(), "the ledger comes back")
	g.Eventually(ledgerOf(ns, class), timeout, tick).Should(Equal([]any{[]string{"a:1", "b:1", "waiting:1"}, int32(3)}))

	// It counts against the limit at once: a fourth claim waits.
	kit.Create(g, b.Claim(ns, "fourth", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "fourth"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonClassLimitReached)))
}

func TestAFamilyTheClassDoesNotServeWaitsWithItsOwnReason(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-a", "198.18.189.1", class))
	// What a driver that rendered only IPv4 ranges reports.
	c := &v1alpha1.IPAddressClass{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
	orig := c.DeepCopy()
	c.Status.Families = []v1alpha1.IPFamily{v1alpha1.IPv4}
	g.Expect(k8s.Status().Patch(context.Background(), c, client.MergeFrom(orig))).To(Succeed())

	kit.Create(g, b.Claim(ns, "v6", b.OfClass(class), b.Family(v1alpha1.IPv6)),
		b.Claim(ns, "dual", b.OfClass(class), b.Family(v1alpha1.Dual)))
	g.Eventually(kit.StateOfClaim(g, ns, "v6"), timeout, tick).Should(Equal(refused(v1alpha1.ReasonFamilyNotServed)))
	g.Expect(meta.FindStatusCondition(kit.Claim(g, ns, "v6").Status.Conditions, v1alpha1.ConditionBound).Message).To(
		Equal(fmt.Sprintf("IPAddressClass %s serves only IPv4 addresses (its status.families); this claim asks for IPv6", class)))
	// A Dual claim binds the family the class serves and says why the other waits.
	g.Eventually(kit.StateOfClaim(g, ns, "dual"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonFamilyNotServed, Addresses: []string{class + "-a"}}))

	// The driver serving IPv6 too lets the claim wait for it instead.
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
	orig = c.DeepCopy()
	c.Status.Families = []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6}
	g.Expect(k8s.Status().Patch(context.Background(), c, client.MergeFrom(orig))).To(Succeed())
	g.Eventually(kit.StateOfClaim(g, ns, "v6"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForProvisioning))
}
