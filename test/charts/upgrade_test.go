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

package charts

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/gitarchive"
)

// previousChart is the commit whose core chart the upgrade starts from: a
// chart that shipped the CRDs in crds/, which Helm installs once and never
// upgrades, and whose IPAddressClass has no spec.addressesPerNamespace and
// whose API has no IPAddressClassUsage kind yet.
const previousChart = "fad4b92a507801f55dd3ccd917c8051dc07189c1"

// The release the upgrade test installs, as docs/install.md names it.
const (
	coreRelease   = "address-controller"
	coreNamespace = "address-controller-system"
)

// TestUpgradeFromChartWithCRDsFolder installs the core chart of
// previousChart on a cluster without the project's CRDs, as a user did,
// makes a class, an address and a claim, upgrades the release to the chart
// of the working tree by each route docs/install.md gives ("Upgrading"), and
// checks that the API server then serves the new schema, that the objects
// are intact, and that helm uninstall leaves the CRDs.
func TestUpgradeFromChartWithCRDsFolder(t *testing.T) {
	old := checkoutChart(t, previousChart, coreChart)
	for _, route := range []struct {
		name string
		// adopt prepares the CRDs for the new release and returns the
		// arguments helm upgrade needs on top.
		adopt func(t *testing.T, c *cluster.Cluster, k client.Client) []string
	}{
		{"the CRDs labelled and annotated by hand", func(t *testing.T, c *cluster.Cluster, k client.Client) []string {
			names := projectCRDs(t, k)
			kubectl(t, c, append(append([]string{"label"}, names...), "app.kubernetes.io/managed-by=Helm")...)
			kubectl(t, c, append(append([]string{"annotate"}, names...),
				"meta.helm.sh/release-name="+coreRelease, "meta.helm.sh/release-namespace="+coreNamespace)...)
			return nil
		}},
		{"helm upgrade --take-ownership", func(*testing.T, *cluster.Cluster, client.Client) []string {
			return []string{"--take-ownership"}
		}},
	} {
		t.Run(route.name, func(t *testing.T) {
			g := NewWithT(t)
			// A control plane of its own, without the CRDs the package's
			// shared one installs: the old chart creates them. Stopping it
			// removes everything the test makes.
			c, err := cluster.Start(cluster.Options{WithoutMetalLB: true, WithoutControllerManager: true, WithoutCRDs: true})
			g.Expect(err).NotTo(HaveOccurred(), "starting a control plane")
			t.Cleanup(func() {
				if err := c.Stop(); err != nil {
					t.Errorf("stopping the control plane: %v", err)
				}
			})
			scheme := manager.NewScheme()
			g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
			k, err := client.New(c.Config, client.Options{Scheme: scheme})
			g.Expect(err).NotTo(HaveOccurred())
			ctx := t.Context()
			helm := func(args ...string) (string, error) {
				return runHelm(t, append(args, "--kubeconfig", c.Kubeconfig)...)
			}

			out, err := helm("install", coreRelease, old, "--namespace", coreNamespace, "--create-namespace")
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(projectCRDs(t, k)).To(HaveLen(3), "the previous chart creates its three CRDs from crds/")
			g.Expect(crdServed(ctx, k, "ipaddressclassusages")).To(BeFalse(), "the previous chart has no IPAddressClassUsage")

			g.Expect(k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}})).To(Succeed())
			class := builder.Class("public", "metallb.drivers.local.sdn.cozystack.io", builder.Parameters(`{"addresses":["198.51.100.0/28"]}`))
			address := builder.Address("public-198-51-100-1", "198.51.100.1", "public")
			claim := builder.Claim("tenant", "web", builder.OfClass("public"))
			for _, obj := range []client.Object{class, address, claim} {
				g.Expect(k.Create(ctx, obj)).To(Succeed())
			}
			uids := map[string]types.UID{}
			for _, obj := range []client.Object{class, address, claim} {
				uids[obj.GetName()] = obj.GetUID()
			}
			stored, err := setAddressesPerNamespace(ctx, k, 2)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(stored).To(BeNil(), "the previous schema prunes the field it does not know")

			out, err = helm("upgrade", coreRelease, chartDir(t, coreChart), "--namespace", coreNamespace)
			g.Expect(err).To(HaveOccurred(), "helm adopts no CRD it did not make\n%s", out)
			g.Expect(err.Error()).To(MatchRegexp(`CustomResourceDefinition "[a-z]+\.local\.sdn\.cozystack\.io" .*invalid ownership metadata`))

			extra := route.adopt(t, c, k)
			out, err = helm(append([]string{"upgrade", coreRelease, chartDir(t, coreChart), "--namespace", coreNamespace}, extra...)...)
			g.Expect(err).NotTo(HaveOccurred(), out)

			// The new chart owns every CRD, and keeps it.
			crds := projectCRDs(t, k)
			g.Expect(crds).To(HaveLen(4))
			for _, name := range crds {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				g.Expect(k.Get(ctx, client.ObjectKey{Name: strings.TrimPrefix(name, "customresourcedefinition.apiextensions.k8s.io/")}, crd)).To(Succeed())
				g.Expect(crd.Annotations).To(And(
					HaveKeyWithValue("helm.sh/resource-policy", "keep"),
					HaveKeyWithValue("meta.helm.sh/release-name", coreRelease),
					HaveKeyWithValue("meta.helm.sh/release-namespace", coreNamespace)), name)
				g.Expect(crd.Labels).To(And(
					HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"),
					HaveKeyWithValue("app.kubernetes.io/name", coreChart)), name)
			}
			// The API server serves the new schema.
			g.Eventually(func() bool { return crdServed(ctx, k, "ipaddressclassusages") }, 30*time.Second, 200*time.Millisecond).
				Should(BeTrue(), "the upgrade creates the CRD the previous chart lacked")
			stored, err = setAddressesPerNamespace(ctx, k, 2)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(stored).To(HaveValue(BeEquivalentTo(2)), "the upgraded schema keeps spec.addressesPerNamespace")
			// The objects made before the upgrade are intact.
			for _, obj := range []client.Object{builder.Class("public", ""), builder.Address("public-198-51-100-1", "", ""), builder.Claim("tenant", "web")} {
				g.Expect(k.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				g.Expect(obj.GetUID()).To(Equal(uids[obj.GetName()]), "%s is the object made before the upgrade", obj.GetName())
			}
			got := &localv1alpha1.IPAddressClaim{}
			g.Expect(k.Get(ctx, client.ObjectKeyFromObject(claim), got)).To(Succeed())
			g.Expect(got.Spec).To(Equal(claim.Spec))
			gotAddress := &localv1alpha1.IPAddress{}
			g.Expect(k.Get(ctx, client.ObjectKeyFromObject(address), gotAddress)).To(Succeed())
			g.Expect(gotAddress.Spec).To(Equal(address.Spec))

			// helm uninstall leaves the CRDs and their objects (crds.keep).
			out, err = helm("uninstall", coreRelease, "--namespace", coreNamespace)
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(projectCRDs(t, k)).To(HaveLen(4))
			g.Expect(k.Get(ctx, client.ObjectKeyFromObject(claim), got)).To(Succeed())
		})
	}
}

// checkoutChart writes chart as it was at commit into a temporary folder
// and returns the chart's folder.
func checkoutChart(t *testing.T, commit, chart string) string {
	t.Helper()
	dir := t.TempDir()
	if err := gitarchive.Extract(t.Context(), repoPath(t), commit, dir, "charts/"+chart); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "charts", chart)
}

// projectCRDs returns the CRDs of the project's API group, as kubectl names
// them.
func projectCRDs(t *testing.T, k client.Client) []string {
	t.Helper()
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := k.List(t.Context(), list); err != nil {
		t.Fatalf("listing CRDs: %v", err)
	}
	var names []string
	for _, crd := range list.Items {
		if crd.Spec.Group == localv1alpha1.GroupVersion.Group {
			names = append(names, "customresourcedefinition.apiextensions.k8s.io/"+crd.Name)
		}
	}
	return names
}

// crdServed says whether the CRD of the project's plural resource exists and
// is established.
func crdServed(ctx context.Context, k client.Client, plural string) bool {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.Get(ctx, client.ObjectKey{Name: plural + "." + localv1alpha1.GroupVersion.Group}, crd); err != nil {
		return false
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// setAddressesPerNamespace patches the class public's
// spec.addressesPerNamespace and returns what the API server stored.
func setAddressesPerNamespace(ctx context.Context, k client.Client, n int32) (*int32, error) {
	class := builder.Class("public", "")
	patch := `{"spec":{"addressesPerNamespace":` + strconv.Itoa(int(n)) + `}}`
	if err := k.Patch(ctx, class, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return nil, err
	}
	return class.Spec.AddressesPerNamespace, nil
}

// kubectl runs the pinned kubectl against c, failing the test on error.
func kubectl(t *testing.T, c *cluster.Cluster, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), c.Assets.Kubectl(), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
}
