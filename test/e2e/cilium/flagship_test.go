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

// Package cilium holds the end-to-end specs of the Cilium driver: the
// flagship flow of the driver's README, driven only through the API as an
// admin or a tenant would, on the local harness with Cilium's operator in
// place of MetalLB and both charts installed (test/e2e/harness,
// StartLocalCilium). The MetalLB specs live in test/e2e; the two drivers
// cannot share a cluster, since both would answer the same Services.
package cilium

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/cilium"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
)

const (
	timeout = 60 * time.Second
	tick    = 200 * time.Millisecond
)

var (
	h   *harness.Local
	kit *testkit.Kit
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var err error
		if h, err = harness.StartLocalCilium(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = h.Close() }()
		c, err := client.New(h.Config(), client.Options{Scheme: manager.NewScheme()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// What a test makes is removed when it ends (the managers still
		// run), and the package fails if anything is left.
		kit = testkit.New(c).Tidy(testkit.Tidying{Within: timeout})
		pools := &unstructured.UnstructuredList{}
		pools.SetGroupVersionKind(cilium.PoolGVK.GroupVersion().WithKind(cilium.PoolGVK.Kind + "List"))
		sights := []testkit.Sight{
			{Kind: "Namespace", List: &corev1.NamespaceList{}},
			{Kind: "IPAddressClass", List: &v1alpha1.IPAddressClassList{}},
			{Kind: "IPAddress", List: &v1alpha1.IPAddressList{}},
			{Kind: "Service", List: &corev1.ServiceList{}, Namespace: h.PlaceholderNamespace()},
			{Kind: cilium.PoolGVK.Kind, List: pools},
		}
		before, err := kit.Inventory(ctx, sights)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		code := m.Run()
		if code == 0 {
			code = kit.LeftBehind(before, sights, time.Minute)
		}
		if code != 0 {
			for _, mgr := range []harness.Manager{harness.Core, harness.CiliumDriver} {
				fmt.Fprintf(os.Stderr, "--- %s log ---\n%s\n", mgr, h.Log(mgr))
			}
		}
		return code
	}())
}

// kubectl runs kubectl against the cluster as an admin, with stdin, and
// fails the test on an error.
func kubectl(t *testing.T, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(h.Kubectl(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.Kubeconfig())
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// TestFlagshipFlow: claim, hold, attach A, detach A, attach B to the same
// address, then tear everything down, as the driver's README tells.
func TestFlagshipFlow(t *testing.T) {
	g := NewWithT(t)
	const ns = "tenant-flagship"
	kit.Own(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, b.Class("flagship", ""))
	kubectl(t, `
apiVersion: v1
kind: Namespace
metadata: {name: tenant-flagship}
---`+testkit.ClassYAML("flagship", "cilium.drivers.local.sdn.cozystack.io", `
  reclaimPolicy: Delete
  parameters: {addresses: ["198.51.100.0/28"]}
`)+"---"+testkit.ClaimYAML(ns, "web", "flagship"), "apply", "-f", "-")

	t.Log("the claim is Bound to an address X that a placeholder holds")
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	x := kit.Claim(g, ns, "web").Status.Addresses[0].Address
	held := ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/"))
	g.Eventually(kit.Holders(g, x), timeout, tick).Should(held)

	t.Log("Service A names the claim and gets X; the placeholder is gone")
	kubectl(t, testkit.ClaimingServiceYAML(ns, "a", "web"), "apply", "-f", "-")
	g.Eventually(kit.Holders(g, x), timeout, tick).Should(Equal([]string{ns + "/a"}))

	t.Log("A stops naming the claim: a placeholder holds X again, A has nothing, the claim stays Bound")
	kubectl(t, "", "-n", ns, "annotate", "service", "a", v1alpha1.AnnotationIPAddressClaim+"-")
	g.Eventually(kit.Holders(g, x), timeout, tick).Should(held)
	g.Expect(kit.StateOfClaim(g, ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))

	t.Log("Service B names the claim and gets the same X")
	kubectl(t, testkit.ClaimingServiceYAML(ns, "b", "web"), "apply", "-f", "-")
	g.Eventually(kit.Holders(g, x), timeout, tick).Should(Equal([]string{ns + "/b"}))

	t.Log("teardown: deleting the claim frees X, then the class leaves no pool and no placeholder behind")
	kubectl(t, "", "-n", ns, "delete", "ipaddressclaim", "web")
	g.Eventually(kit.Holders(g, x), timeout, tick).Should(BeEmpty())
	kubectl(t, "", "delete", "ipaddressclass", "flagship")
	g.Eventually(func() []string {
		pools := &unstructured.UnstructuredList{}
		pools.SetGroupVersionKind(cilium.PoolGVK.GroupVersion().WithKind(cilium.PoolGVK.Kind + "List"))
		g.Expect(kit.List(context.Background(), pools)).To(Succeed())
		out := make([]string, 0, len(pools.Items))
		for _, p := range pools.Items {
			out = append(out, p.GetName())
		}
		phs := &corev1.ServiceList{}
		g.Expect(kit.List(context.Background(), phs, client.InNamespace(h.PlaceholderNamespace()),
			client.HasLabels{v1alpha1.LabelPlaceholder})).To(Succeed())
		for _, s := range phs.Items {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	}, timeout, tick).Should(BeEmpty())
	g.Expect(kit.Service(g, ns, "b").Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy))
}
