//go:build node

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

package shipped_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/gitarchive"
	"github.com/cozystack/address-controller/test/images"
)

// previousRelease is the commit the upgrade starts from, standing for the
// previous release (every chart is still at version 0.1.0): the last commit
// before the CRDs changed, when IPAddressClass gained status.capacity and
// its Capacity printer columns (82a9805), so that the upgrade has a schema
// to change and a field only the new CRD keeps.
const previousRelease = "737d8437b1c6795ff52d879e16bcebeb87bf1909"

// previousTag tags the images of the managers built from previousRelease.
const previousTag = "previous"

// testUpgradeFromPrevious installs the core's and the MetalLB driver's
// charts as previousRelease had them, running that commit's managers
// (built from its tree into images tagged previousTag), walks the flagship
// flow up to the client's answer from Service A and Binds a second claim,
// which only a placeholder holds; then upgrades both releases in the order
// docs/install.md gives (the core first), with helm upgrade to this tree's
// charts and images. Nothing is lost: a watch on each claim sees it Bound
// to its one address throughout, the claims and IPAddresses are the same
// objects, A still holds its address and the client still reaches A's Pod,
// a placeholder still holds the second. The CRDs are upgraded with the
// chart: the IPAddressClass CRD gains status.capacity and its printer
// column, and the new driver fills the class's capacity in. The handoff
// from A to B then runs on the upgraded managers.
//
// Artefacts: the charts address-controller and metallb-iad at
// previousRelease and now (templates crds/*.yaml behind crds.enabled,
// deployment.yaml's image from image.tag, the Deployment's rolling
// update), the managers' images of both, and the values image.tag and
// image.pullPolicy.
func testUpgradeFromPrevious(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tree := t.TempDir()
	g.Expect(gitarchive.Extract(ctx, root, previousRelease, tree)).To(Succeed())
	began := time.Now()
	previous, err := images.Build(ctx, images.Options{Root: tree, Dir: t.TempDir(), Tag: previousTag, Only: []string{coreImage, driverImage}})
	g.Expect(err).NotTo(HaveOccurred(), "building the managers of %s", previousRelease)
	refs := map[string]string{}
	for _, a := range previous {
		g.Expect(nodes.ImportImage(ctx, a.Path)).To(Succeed())
		refs[a.Image.Name] = a.Ref
	}
	t.Logf("Built and imported the managers of %s in %s", previousRelease[:7], time.Since(began).Round(time.Millisecond))

	installRelease(t, g, harness.Core, harness.CoreNamespace, filepath.Join(tree, "charts", string(harness.Core)), refs[coreImage])
	installRelease(t, g, harness.Driver, harness.DriverNamespace, filepath.Join(tree, "charts", string(harness.Driver)), refs[driverImage])
	crds, err := apiextensions.NewForConfig(c.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(classCapacityInSchema(ctx, g, crds)).To(BeFalse(), "the previous chart's IPAddressClass CRD has no status.capacity")

	f := claimAndServe(t, g)
	kit.Create(g, b.Claim(f.ns, "spare", b.OfClass(f.class)))
	g.Eventually(kit.StateOfClaim(g, f.ns, "spare")).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).
		Should(HaveField("Phase", v1alpha1.ClaimBound), func() string { return diagnose(ctx, harness.DriverNamespace) })
	spare := kit.Claim(g, f.ns, "spare").Status.Addresses[0].Address
	g.Eventually(kit.Holders(g, spare)).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).
		Should(ConsistOf(HavePrefix(harness.DriverNamespace+"/")), "a placeholder holds the second claim's address")
	uids := map[string]types.UID{}
	for _, name := range []string{"web", "spare"} {
		claim := kit.Claim(g, f.ns, name)
		uids[claim.Name] = claim.UID
		address := kit.Address(g, claim.Status.Addresses[0].Name)
		uids[address.Name] = address.UID
	}
	claims := watchClaims(g, f.ns)

	began = time.Now()
	upgrade(t, g, harness.Core, harness.CoreNamespace, coreImage)
	g.Expect(classCapacityInSchema(ctx, g, crds)).To(BeTrue(), "helm upgrade upgrades the IPAddressClass CRD")
	upgrade(t, g, harness.Driver, harness.DriverNamespace, driverImage)
	g.Eventually(func(g Gomega) *v1alpha1.AddressCounts {
		class := &v1alpha1.IPAddressClass{}
		g.Expect(watcher.Get(ctx, client.ObjectKey{Name: f.class}, class)).To(Succeed())
		return class.Status.Capacity
	}).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).Should(HaveField("Total", BeNumerically("==", 8)),
		"the upgraded driver reports the class's /29 in status.capacity, which the upgraded CRD keeps")
	t.Logf("Both releases were upgraded %s after the first helm upgrade", time.Since(began).Round(time.Millisecond))

	g.Expect(kit.Holders(g, f.address)()).To(Equal([]string{f.ns + "/a"}))
	g.Expect(kit.Holders(g, spare)()).To(ConsistOf(HavePrefix(harness.DriverNamespace + "/")))
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+f.address+"/")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HavePrefix("hello from a-"))
	claims().kept(g, map[string]string{"web": f.address, "spare": spare})
	for _, name := range []string{"web", "spare"} {
		claim := kit.Claim(g, f.ns, name)
		g.Expect(claim.UID).To(Equal(uids[name]), "the claim %s was made again", name)
		address := kit.Address(g, claim.Status.Addresses[0].Name)
		g.Expect(address.UID).To(Equal(uids[address.Name]), "the IPAddress %s was made again", address.Name)
		g.Expect(address.Status.Phase).To(Equal(v1alpha1.AddressBound))
	}

	// The upgraded managers hand the address over.
	g.Expect(cs.CoreV1().Services(f.ns).Delete(ctx, "a", metav1.DeleteOptions{})).To(Succeed())
	createB(g, f)
	reachB(t, g, f)
}

// upgrade upgrades the release of manager m in namespace to this tree's
// chart, running the image called image, as a user upgrades (helm upgrade
// with the values the user gives, here the image's), and waits for the
// rollout to end.
func upgrade(t *testing.T, g Gomega, m harness.Manager, namespace, image string) {
	t.Helper()
	ref := archives[image].Ref
	values := imageValues(ref)
	args := make([]string, 0, 5+2*len(values))
	args = append(args, "upgrade", string(m), filepath.Join(root, "charts", string(m)), "--namespace", namespace)
	for _, v := range values {
		args = append(args, "--set", v)
	}
	began := time.Now()
	_, err := helm.Run(context.Background(), args...)
	g.Expect(err).NotTo(HaveOccurred())
	rolledOut(g, m, namespace, ref)
	t.Logf("The %s Deployment ran %s %s after helm upgrade", m, ref, time.Since(began).Round(time.Millisecond))
}

// classCapacityInSchema says whether the IPAddressClass CRD's schema has
// status.capacity and the printer column Capacity.
func classCapacityInSchema(ctx context.Context, g Gomega, crds apiextensions.Interface) bool {
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "ipaddressclasses."+v1alpha1.GroupVersion.Group, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == v1alpha1.GroupVersion.Version {
			version = &crd.Spec.Versions[i]
		}
	}
	g.Expect(version).NotTo(BeNil(), "the CRD serves no %s", v1alpha1.GroupVersion.Version)
	_, inSchema := version.Schema.OpenAPIV3Schema.Properties["status"].Properties["capacity"]
	column := false
	for _, col := range version.AdditionalPrinterColumns {
		column = column || col.Name == "Capacity"
	}
	g.Expect(inSchema).To(Equal(column), "status.capacity and its printer column come together")
	return inSchema
}
