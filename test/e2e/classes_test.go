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
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

var _ = Describe("Deleting a class", func() {
	It("is held while Released addresses remain, names them in ClassInUse, and goes once they are deleted", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-classdel")
		t.classWithDelay(ctx, "doomed", "198.51.100.16/28", time.Hour)
		released := releasedBy(ctx, ns, "doomed", "one", "two")

		out, err := kubectl(ctx, "", "delete", "ipaddressclasses.local.sdn.cozystack.io", "doomed", "--wait=false")
		Expect(err).NotTo(HaveOccurred(), out)
		class := b.Class("doomed", "")
		Expect(kit.Get(ctx, clientKey(class), class)).To(Succeed())
		Eventually(kit.EventsAbout(Default, class, v1alpha1.EventClassInUse), timeout, tick).Should(
			ContainElement(And(ContainSubstring(released[0]), ContainSubstring(released[1]))))
		Consistently(kit.Gone(class), 2*time.Second, tick).Should(BeFalse())

		for _, a := range released {
			_, err := kubectl(ctx, "", "delete", "ipaddresses.local.sdn.cozystack.io", a)
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(kit.Gone(class), timeout, tick).Should(BeTrue())
	})
})

var _ = Describe("Quarantining an address", func() {
	It("keeps a held Released address out of the pool past releaseDelay; removing held returns it on the next pass", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-quarantine")
		t.classWithDelay(ctx, "quarantine", "198.51.100.32/28", 4*time.Second)
		name := releasedBy(ctx, ns, "quarantine", "web")[0]
		out, err := kubectl(ctx, "", "annotate", "ipaddresses.local.sdn.cozystack.io", name, "ipaddress.local.sdn.cozystack.io/held=true")
		Expect(err).NotTo(HaveOccurred(), out)

		// The phase and the moment it was entered both stay: held pauses the
		// return, not the clock.
		releasedAt := kit.Address(Default, name).Status.LastPhaseTransitionTime
		Expect(releasedAt).NotTo(BeNil())
		releasedSince := func() any {
			a := kit.Address(Default, name)
			return []any{a.Status.Phase, a.Status.LastPhaseTransitionTime}
		}
		Consistently(releasedSince, 8*time.Second, tick).Should(Equal([]any{v1alpha1.AddressReleased, releasedAt}),
			"held past the 4s releaseDelay")
		out, err = kubectl(ctx, "", "annotate", "ipaddresses.local.sdn.cozystack.io", name, "ipaddress.local.sdn.cozystack.io/held-")
		Expect(err).NotTo(HaveOccurred(), out)
		// The delay has long passed since releasedAt: the next pass returns it.
		Eventually(kit.StateOfAddress(Default, name), timeout, tick).Should(Equal(testkitAddress(v1alpha1.AddressAvailable, v1alpha1.ReasonAvailable, "")))
		Eventually(kit.EventsAbout(Default, kit.Address(Default, name), v1alpha1.EventReleaseDelayExpired), timeout, tick).Should(HaveLen(1))
	})
})

// releasedBy binds a claim of class in ns for each name given, deletes the
// claims and waits until their addresses are Released; it returns the
// addresses' names, in the claims' order. The class must retain them.
func releasedBy(ctx context.Context, ns, class string, claims ...string) []string {
	GinkgoHelper()
	docs := make([]string, 0, len(claims))
	for _, c := range claims {
		docs = append(docs, testkit.ClaimYAML(ns, c, class))
	}
	apply(ctx, strings.Join(docs, "---"))
	names := make([]string, len(claims))
	for i, c := range claims {
		Eventually(kit.StateOfClaim(Default, ns, c), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		names[i] = kit.Claim(Default, ns, c).Status.Addresses[0].Name
	}
	// Not waiting for the claims to go: a short releaseDelay runs from the
	// moment the addresses are Released.
	out, err := kubectl(ctx, "", append([]string{"-n", ns, "delete", "ipaddressclaims.local.sdn.cozystack.io", "--wait=false"}, claims...)...)
	Expect(err).NotTo(HaveOccurred(), out)
	for _, a := range names {
		Eventually(kit.StateOfAddress(Default, a), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
	}
	return names
}

var _ = Describe("Upgrading the CRDs", func() {
	It("applies the current CRDs with make install-crds over existing objects", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "tenant-upgrade")
		t.own(b.Class("upgrade", ""))
		By("running on CRDs as v0.1.0 shipped them: no releaseDelay on classes")
		old := crdWithout("local.sdn.cozystack.io_ipaddressclasses.yaml", "releaseDelay")
		out, err := kubectl(ctx, old, "apply", "--server-side", "--force-conflicts", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		apply(ctx, testkit.ClassYAML("upgrade", metallbProvisioner, `
  parameters: {addresses: ["198.51.100.48/28"]}
`)+"---"+testkit.ClaimYAML(ns, "web", "upgrade"))
		Eventually(kit.StateOfClaim(Default, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		before := kit.Claim(Default, ns, "web").Status.Addresses

		By("make install-crds")
		root, err := cluster.RepoRoot()
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.CommandContext(ctx, "make", "install-crds")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "KUBECONFIG="+h.Kubeconfig())
		if strings.Contains(h.Kubectl(), "/") {
			cmd.Env = append(cmd.Env, "KUBECTL="+h.Kubectl())
		}
		outb, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(outb))

		By("existing objects are intact and the new field works")
		Expect(kit.Claim(Default, ns, "web").Status.Addresses).To(Equal(before))
		out, err = kubectl(ctx, "", "patch", "ipaddressclasses.local.sdn.cozystack.io", "upgrade", "--type=merge", "-p", `{"spec":{"releaseDelay":"30m"}}`)
		Expect(err).NotTo(HaveOccurred(), out)
		upgraded := b.Class("upgrade", "")
		Expect(kit.Get(ctx, clientKey(upgraded), upgraded)).To(Succeed())
		Expect(upgraded.Spec.ReleaseDelay.Duration).To(Equal(30 * time.Minute))
		apply(ctx, testkit.ClaimYAML(ns, "after", "upgrade"))
		Eventually(kit.StateOfClaim(Default, ns, "after"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	})
})

// crdWithout returns one of the current CRDs with a property removed from
// its spec schema, standing in for an older release's CRD.
func crdWithout(file, property string) string {
	GinkgoHelper()
	root, err := cluster.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(root + "/config/crd/bases/" + file)
	Expect(err).NotTo(HaveOccurred())
	var crd map[string]any
	Expect(yaml.Unmarshal(raw, &crd)).To(Succeed())
	versions := crd["spec"].(map[string]any)["versions"].([]any)
	spec := versions[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
	delete(spec["properties"].(map[string]any), property)
	out, err := yaml.Marshal(crd)
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}
