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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// releaseAddress binds a fresh address of class to a claim and deletes the
// claim, leaving the address Released.
func releaseAddress(t *testing.T, g Gomega, ns, class, name, ip string) {
	bindByPreBinding(t, g, b.Claim(ns, name, b.OfClass(class)), b.Address(name, ip, class))
	g.Expect(k8s.Delete(context.Background(), b.Claim(ns, name))).To(Succeed())
	g.Eventually(kit.StateOfAddress(g, name), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/" + name}))
}

// TestReleaseDelay moves its core's clock, so it runs serially on a core of
// its own, and so do its subtests: a jump of hours would also expire the
// first one's two-second delay, which then would no longer be waited for.
func TestReleaseDelay(t *testing.T) {
	clk, _ := startCore(t)

	t.Run("a Released address returns to Available after the delay", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, provisioner, b.ReleaseDelay(2*time.Second)))
		releaseAddress(t, g, ns, class, class+"-a", "198.18.7.1")
		released := kit.Address(g, class+"-a").Status.LastPhaseTransitionTime.Time
		g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(Equal(testkit.AddressState{
			Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}))
		g.Expect(kit.Address(g, class+"-a").Status.LastPhaseTransitionTime.Time.Sub(released)).To(BeNumerically(">=", 2*time.Second))
		g.Eventually(kit.EventsAbout(g, kit.Address(g, class+"-a"), v1alpha1.EventReleaseDelayExpired), timeout, tick).ShouldNot(BeEmpty())
	})

	t.Run("held pauses the return; removing held after the delay returns it on the next pass", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, provisioner, b.ReleaseDelay(time.Hour)))
		releaseAddress(t, g, ns, class, class+"-a", "198.18.7.2")
		a := kit.Address(g, class+"-a")
		kit.SetAnnotation(g, a, v1alpha1.AnnotationHeld, "true")

		clk.advance(2 * time.Hour) // the delay has passed, but the address is held
		kit.SetAnnotation(g, a, "test/nudge", "1")
		g.Consistently(kit.StateOfAddress(g, class+"-a"), 2*time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressReleased))

		kit.SetAnnotation(g, a, v1alpha1.AnnotationHeld, "")
		g.Eventually(kit.StateOfAddress(g, class+"-a"), 5*time.Second, tick).Should(Equal(testkit.AddressState{
			Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}))
	})

	t.Run("shortening the delay returns the class's Released addresses", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		c := b.Class(class, provisioner, b.ReleaseDelay(time.Hour))
		kit.Make(t, g, c)
		releaseAddress(t, g, ns, class, class+"-a", "198.18.7.4")
		// Once the release's own passes are over, only the class's change
		// can wake the address: its pass waits an hour.
		g.Consistently(kit.StateOfAddress(g, class+"-a"), 2*time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressReleased))
		g.Expect(k8s.Patch(context.Background(), c, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"releaseDelay":"1s"}}`)))).To(Succeed())
		g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(Equal(testkit.AddressState{
			Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}))
	})

	t.Run("without a delay a Released address stays Released", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, provisioner))
		releaseAddress(t, g, ns, class, class+"-a", "198.18.7.3")
		clk.advance(24 * time.Hour)
		kit.SetAnnotation(g, kit.Address(g, class+"-a"), "test/nudge", "1")
		g.Consistently(kit.StateOfAddress(g, class+"-a"), 2*time.Second, 100*time.Millisecond).Should(Equal(testkit.AddressState{
			Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/" + class + "-a"}))
	})
}

func TestClearingClaimRefRecyclesAReleasedAddress(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	releaseAddress(t, g, ns, class, class+"-a", "198.18.8.1")

	a := kit.Address(g, class+"-a")
	g.Expect(k8s.Patch(context.Background(), a, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"claimRef":null}}`)))).To(Succeed())
	g.Eventually(kit.StateOfAddress(g, class+"-a"), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}))
	kit.Create(g, b.Claim(ns, "next", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "next"), timeout, tick).Should(HaveField("Addresses", []string{class + "-a"}))
}

func TestLostAddressComesBack(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	bindByPreBinding(t, g, b.Claim(ns, "web", b.OfClass(class)), b.Address(class+"-a", "198.18.9.1", class))
	uid := kit.Claim(g, ns, "web").UID

	// The address disappears (its protection finalizer holds it while the
	// claim lives, so strip it as an admin would; if the core had not added
	// it yet, the deletion alone is enough).
	a := kit.Address(g, class+"-a")
	g.Expect(k8s.Delete(context.Background(), a)).To(Succeed())
	g.Expect(client.IgnoreNotFound(k8s.Patch(context.Background(), a,
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
	g.Eventually(kit.Gone(a), timeout, tick).Should(BeTrue())
	// Another Available address exists: a Lost claim must not take it.
	kit.Make(t, g, b.Address(class+"-spare", "198.18.9.2", class))
	g.Eventually(kit.StateOfAddress(g, class+"-spare"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(testkit.ClaimState{Phase: v1alpha1.ClaimLost, Reason: v1alpha1.ReasonAddressLost}))
	g.Eventually(kit.EventsAbout(g, kit.Claim(g, ns, "web"), v1alpha1.EventClaimLost), timeout, tick).Should(ConsistOf(
		ContainSubstring("the bound IPv4 address is gone")))
	g.Consistently(kit.StateOfAddress(g, class+"-spare"), 2*time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	kit.Make(t, g, b.Address(class+"-a", "198.18.9.1", class, b.BoundTo(ns, "web", uid)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-a"}}))
}

func TestRecreatedClaimNeverAdoptsTheOldAddress(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	bindByPreBinding(t, g, b.Claim(ns, "web", b.OfClass(class)), b.Address(class+"-a", "198.18.10.1", class))
	old := kit.Claim(g, ns, "web")
	g.Expect(k8s.Delete(context.Background(), old)).To(Succeed())
	g.Eventually(kit.Gone(old), timeout, tick).Should(BeTrue())

	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimPending, Reason: v1alpha1.ReasonWaitingForProvisioning}))
	g.Consistently(func() any {
		a := kit.Address(g, class+"-a")
		return []any{a.Status.Phase, a.Spec.ClaimRef.UID}
	}, 2*time.Second, 100*time.Millisecond).Should(Equal([]any{v1alpha1.AddressReleased, old.UID}))
	g.Expect(kit.StateOfClaim(g, ns, "web")().Addresses).To(BeEmpty())
}

func TestDualBindsOneAddressOfEachFamily(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner),
		b.Address(class+"-4", "198.18.11.1", class), b.Address(class+"-6", "2001:db8:11::1", class),
		b.Address(class+"-6b", "2001:db8:11::2", class))
	g.Eventually(kit.StateOfAddress(g, class+"-6b"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	kit.Create(g, b.Claim(ns, "dual", b.OfClass(class), b.Family(v1alpha1.Dual)))
	g.Eventually(kit.StateOfClaim(g, ns, "dual"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-4", class + "-6"}}))
	g.Expect(kit.Claim(g, ns, "dual").Status.Addresses).To(Equal([]v1alpha1.ClaimedAddress{
		{Name: class + "-4", Address: "198.18.11.1"}, {Name: class + "-6", Address: "2001:db8:11::1"}}))
	g.Consistently(kit.StateOfAddress(g, class+"-6b"), time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressAvailable))
}

func TestDeletingAClassWaitsForItsAddresses(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	c := b.Class(class, provisioner)
	kit.Make(t, g, c)
	bindByPreBinding(t, g, b.Claim(ns, "bound", b.OfClass(class)), b.Address(class+"-bound", "198.18.12.1", class))
	releaseAddress(t, g, ns, class, class+"-released", "198.18.12.2")
	kit.Make(t, g, b.Address(class+"-free", "198.18.12.3", class))
	g.Eventually(kit.StateOfAddress(g, class+"-free"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))

	g.Expect(k8s.Delete(context.Background(), c)).To(Succeed())
	g.Eventually(kit.EventsAbout(g, c, v1alpha1.EventClassInUse), timeout, tick).Should(ContainElement(And(
		ContainSubstring(class+"-bound"), ContainSubstring(class+"-released"), ContainSubstring(class+"-free"))))

	// A bound claim is untouched; a new claim of the class finds no class.
	g.Consistently(kit.StateOfClaim(g, ns, "bound"), time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.ClaimBound))
	kit.Create(g, b.Claim(ns, "new", b.OfClass(class)))
	g.Eventually(func() string {
		return testkit.Reason(kit.Claim(g, ns, "new").Status.Conditions, v1alpha1.ConditionClassResolved)
	}, timeout, tick).Should(Equal(v1alpha1.ReasonClassNotFound))
	g.Expect(kit.StateOfAddress(g, class+"-free")()).To(HaveField("Phase", v1alpha1.AddressAvailable))

	for _, name := range []string{"-free", "-released"} {
		g.Expect(k8s.Delete(context.Background(), b.Address(class+name, "", ""))).To(Succeed())
	}
	g.Consistently(kit.Gone(c), time.Second, 100*time.Millisecond).Should(BeFalse(), "the bound address still holds it")
	g.Expect(k8s.Delete(context.Background(), b.Claim(ns, "bound"))).To(Succeed())
	g.Eventually(kit.StateOfAddress(g, class+"-bound"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
	g.Expect(k8s.Delete(context.Background(), b.Address(class+"-bound", "", ""))).To(Succeed())
	g.Eventually(kit.Gone(c), timeout, tick).Should(BeTrue())
}

func TestAddressNameWaitsForTheNamedAddress(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-other", "198.18.13.9", class))
	kit.Create(g, b.Claim(ns, "named", b.OfClass(class), b.Named(class+"-wanted")))
	g.Eventually(func() string {
		c := kit.Claim(g, ns, "named")
		return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionBound) + ": " + fmt.Sprint(c.Status.Conditions)
	}, timeout, tick).Should(And(HavePrefix(v1alpha1.ReasonWaitingForAddress), ContainSubstring("does not exist yet")))
	// The other address gets its own first pass in its own time; once it
	// has, it is Available and stays unbound.
	unbound := testkit.AddressState{Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}
	g.Eventually(kit.StateOfAddress(g, class+"-other"), timeout, tick).Should(Equal(unbound))

	kit.Make(t, g, b.Address(class+"-wanted", "198.18.13.1", class))
	g.Eventually(kit.StateOfClaim(g, ns, "named"), timeout, tick).Should(Equal(testkit.ClaimState{
		Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-wanted"}}))
	g.Expect(kit.StateOfAddress(g, class+"-other")()).To(Equal(unbound))
}

func TestDuplicateAddressIsNeverMatched(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-z-original", "198.18.14.1", class))
	g.Eventually(kit.StateOfAddress(g, class+"-z-original"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	time.Sleep(1100 * time.Millisecond) // creation timestamps have second precision
	kit.Make(t, g, b.Address(class+"-a-copy", "198.18.14.1", class))
	g.Eventually(func() string {
		a := kit.Address(g, class+"-a-copy")
		return testkit.Reason(a.Status.Conditions, v1alpha1.ConditionBound) + ": " + fmt.Sprint(a.Status.Conditions)
	}, timeout, tick).Should(And(HavePrefix(v1alpha1.ReasonDuplicate), ContainSubstring(class+"-z-original")))

	// The copy has the smaller name, yet one claim gets the original and the
	// other nothing.
	kit.Create(g, b.Claim(ns, "one", b.OfClass(class)), b.Claim(ns, "two", b.OfClass(class)))
	bound := func() []string {
		return append(kit.StateOfClaim(g, ns, "one")().Addresses, kit.StateOfClaim(g, ns, "two")().Addresses...)
	}
	g.Eventually(bound, timeout, tick).Should(Equal([]string{class + "-z-original"}))
	g.Consistently(bound, 2*time.Second, 100*time.Millisecond).Should(Equal([]string{class + "-z-original"}))
	g.Expect(kit.StateOfAddress(g, class+"-a-copy")()).To(Equal(testkit.AddressState{Phase: v1alpha1.AddressPending, Reason: v1alpha1.ReasonDuplicate}))
}

func TestRacingClaims(t *testing.T) {
	// A core of its own, serial: 200 claims at once fill a shared core's
	// queues, and the parallel tests on it would wait behind them past
	// their timeouts (a lost address seen 20 s late, in one run).
	startCore(t)

	t.Run("two claims for one address: exactly one wins", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-only", "198.18.15.1", class))
		g.Eventually(kit.StateOfAddress(g, class+"-only"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
		kit.CreateConcurrently(g, b.Claim(ns, "one", b.OfClass(class)), b.Claim(ns, "two", b.OfClass(class)))
		g.Eventually(func() []v1alpha1.IPAddressClaimPhase {
			return []v1alpha1.IPAddressClaimPhase{kit.Claim(g, ns, "one").Status.Phase, kit.Claim(g, ns, "two").Status.Phase}
		}, timeout, tick).Should(ConsistOf(v1alpha1.ClaimBound, v1alpha1.ClaimPending))
		g.Consistently(func() int {
			return len(kit.Claim(g, ns, "one").Status.Addresses) + len(kit.Claim(g, ns, "two").Status.Addresses)
		}, time.Second, 100*time.Millisecond).Should(Equal(1))
	})

	t.Run("200 claims for 200 addresses: all Bound, none twice", func(t *testing.T) {
		g := NewWithT(t)
		ns, class := kit.Namespace(t), testkit.Name(t)
		const n = 200
		kit.Make(t, g, b.Class(class, provisioner))
		objs := make([]client.Object, 0, n)
		for i := range n {
			objs = append(objs, b.Address(fmt.Sprintf("%s-%03d", class, i), fmt.Sprintf("198.19.%d.%d", i/250, i%250+1), class))
		}
		kit.Own(t, objs...)
		kit.CreateConcurrently(g, objs...)
		g.Eventually(func() int { return countAddresses(g, class, v1alpha1.AddressAvailable) }, timeout, tick).Should(Equal(n))
		objs = make([]client.Object, 0, n)
		for i := range n {
			objs = append(objs, b.Claim(ns, fmt.Sprintf("claim-%03d", i), b.OfClass(class)))
		}
		kit.CreateConcurrently(g, objs...)
		g.Eventually(func() int { return countAddresses(g, class, v1alpha1.AddressBound) }, 60*time.Second, 200*time.Millisecond).Should(Equal(n))
		g.Eventually(func() int {
			list := &v1alpha1.IPAddressClaimList{}
			g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
			bound := 0
			for _, c := range list.Items {
				if c.Status.Phase == v1alpha1.ClaimBound && len(c.Status.Addresses) == 1 {
					bound++
				}
			}
			return bound
		}, 60*time.Second, 200*time.Millisecond).Should(Equal(n))

		// Every address names a different claim, by UID, and each claim
		// reports exactly its own address.
		list := &v1alpha1.IPAddressList{}
		g.Expect(k8s.List(context.Background(), list)).To(Succeed())
		owners := map[types.UID]string{}
		for _, a := range list.Items {
			if a.Spec.ClassName != class {
				continue
			}
			g.Expect(owners).NotTo(HaveKey(a.Spec.ClaimRef.UID), "address %s and %s share a claim", a.Name, owners[a.Spec.ClaimRef.UID])
			owners[a.Spec.ClaimRef.UID] = a.Name
			c := kit.Claim(g, ns, a.Spec.ClaimRef.Name)
			g.Expect(c.UID).To(Equal(a.Spec.ClaimRef.UID))
			g.Expect(c.Status.Addresses).To(Equal([]v1alpha1.ClaimedAddress{{Name: a.Name, Address: a.Spec.Address}}))
		}
		g.Expect(owners).To(HaveLen(n))
	})
}

func countAddresses(g Gomega, class string, phase v1alpha1.IPAddressPhase) int {
	list := &v1alpha1.IPAddressList{}
	g.Expect(k8s.List(context.Background(), list)).To(Succeed())
	n := 0
	for _, a := range list.Items {
		if a.Spec.ClassName == class && a.Status.Phase == phase {
			n++
		}
	}
	return n
}

// TestFinalizerClearingCommands runs the seed's commands for clearing
// finalizers, verbatim, with the pinned kubectl while the core is stopped.
// It stays serial, on a core of its own: it stops the core, and the commands
// strip the finalizers of every claim, address and class in the cluster.
func TestFinalizerClearingCommands(t *testing.T) {
	g := NewWithT(t)
	_, stop := startCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	c := b.Class(class, provisioner)
	kit.Make(t, g, c)
	bindByPreBinding(t, g, b.Claim(ns, "web", b.OfClass(class)), b.Address(class+"-a", "198.18.16.1", class))
	kit.Make(t, g, b.Address(class+"-free", "198.18.16.2", class))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(kit.StateOfAddress(g, class+"-free"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	g.Eventually(func() []string { return kit.Finalizers(g, c) }, timeout, tick).Should(ContainElement(v1alpha1.FinalizerClassProtection))
	stop()

	objs := []client.Object{b.Claim(ns, "web"), b.Address(class+"-a", "", ""), b.Address(class+"-free", "", ""), c}
	for _, o := range objs {
		g.Expect(k8s.Delete(context.Background(), o)).To(Succeed())
	}
	g.Consistently(kit.Gone(objs[0]), time.Second, 100*time.Millisecond).Should(BeFalse(), "without the core, deletion hangs")

	out, err := runWithKubectl(testkit.FinalizerClearingScript)
	g.Expect(err).NotTo(HaveOccurred(), out)
	for _, o := range objs {
		g.Eventually(kit.Gone(o), timeout, tick).Should(BeTrue(), "%s is gone", o.GetName())
	}
}

// runWithKubectl runs a shell script with the pinned kubectl first on PATH.
func runWithKubectl(script string) (string, error) {
	cmd := testCluster.Kubectl(context.Background())
	kubectlDir := strings.TrimSuffix(cmd.Path, "/kubectl")
	sh := testCluster.Kubectl(context.Background())
	sh.Path, sh.Args = "/bin/bash", []string{"bash", "-euo", "pipefail", "-c", script}
	sh.Env = append(sh.Env, "PATH="+kubectlDir+":/usr/bin:/bin")
	out, err := sh.CombinedOutput()
	return string(out), err
}
