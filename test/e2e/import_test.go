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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/test/testkit"
)

// The inventory import of operating.md, run as an admin runs it: the
// metallb-iad binary with the admin's kubeconfig.
var _ = Describe("Importing the addresses MetalLB already gave Services", func() {
	It("brings them under claims and hands the range over, and no Service changes its address", func(ctx SpecContext) {
		t := newTidy()
		ns := t.namespace(ctx, "import-a")
		By("an auto-assigned pool of the admin's own hands addresses to plain Services")
		t.own(metallbObject(params.IPAddressPoolGVK, "legacy-import"))
		apply(ctx, `
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: legacy-import, namespace: metallb-system}
spec:
  addresses: ["198.51.100.224/28"]
  autoAssign: true
  serviceAllocation: {namespaces: [import-a]}
`)
		for _, name := range []string{"web-0", "web-1", "web-2", "shared-a"} {
			apply(ctx, service(ns, name, 80, `{metallb.io/allow-shared-ip: "legacy"}`, name == "shared-a"))
		}
		Eventually(func() []string { return ingressOf(ns, "shared-a") }, timeout, tick).Should(HaveLen(1))
		shared := ingressOf(ns, "shared-a")[0]
		apply(ctx, service(ns, "shared-b", 443, fmt.Sprintf(`{metallb.io/allow-shared-ip: "legacy", metallb.io/loadBalancerIPs: %q}`, shared), true))
		start := map[string][]string{}
		for _, name := range []string{"web-0", "web-1", "web-2", "shared-a", "shared-b"} {
			Eventually(func() []string { return ingressOf(ns, name) }, timeout, tick).Should(HaveLen(1), name)
			start[name] = ingressOf(ns, name)
		}
		keep := func() {
			GinkgoHelper()
			for name, ips := range start {
				Expect(ingressOf(ns, name)).To(Equal(ips), name)
			}
		}

		By("a class over the same range, which the driver does not render while the pool overlaps it")
		t.classOver(ctx, "imported", "198.51.100.224/28")
		Eventually(func() string {
			c := &v1alpha1.IPAddressClass{}
			Expect(kit.Get(ctx, client.ObjectKey{Name: "imported"}, c)).To(Succeed())
			return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionRendered)
		}, timeout, tick).Should(Equal("OverlapsOtherPool"))

		args := []string{"import", "--kubeconfig", h.Kubeconfig(), "--class", "imported", "--namespace", ns,
			"--placeholder-namespace", h.PlaceholderNamespace()}
		By("the dry run")
		out := metallbIAD(ctx, args...)
		Expect(out).To(ContainSubstring("class imported: 3 to import, 0 imported already, 2 skipped"))
		Expect(out).To(ContainSubstring("import-a/shared-b"))
		keep()

		By("the import")
		out = metallbIAD(ctx, append(args, "--apply")...)
		Expect(strings.Count(out, "  imported")).To(Equal(3), out)
		for _, name := range []string{"web-0", "web-1", "web-2"} {
			Expect(kit.Claim(Default, ns, name).Status.Phase).To(Equal(v1alpha1.ClaimBound), name)
		}
		keep()

		By("the handover, with MetalLB's webhook (if any) set aside as the manual says")
		script := `
if kubectl get validatingwebhookconfiguration metallb-webhook-configuration >/dev/null 2>&1; then
  kubectl get validatingwebhookconfiguration metallb-webhook-configuration -o yaml > "$TMP/metallb-webhook.yaml"
  kubectl delete validatingwebhookconfiguration metallb-webhook-configuration
  trap 'kubectl apply -f "$TMP/metallb-webhook.yaml"' EXIT
fi
"$IAD" ` + strings.Join(append(args, "--handover", "--apply"), " ")
		out, err := shell(ctx, "TMP="+GinkgoT().TempDir()+" IAD="+binary(ctx)+"\n"+script)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("handed over: IPAddressClass imported is Rendered"))
		for _, name := range []string{"web-0", "web-1", "web-2"} {
			Eventually(func() map[string]string { return kit.Service(Default, ns, name).Annotations }, timeout, tick).
				Should(HaveKeyWithValue("metallb.io/ip-allocated-from-pool", "iad-imported"), name)
		}
		keep()
	})
})

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// binary builds metallb-iad once and returns its path.
func binary(ctx context.Context) string {
	GinkgoHelper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "metallb-iad-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "metallb-iad")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", built, "../../cmd/metallb-iad").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	Expect(buildErr).NotTo(HaveOccurred())
	return built
}

// metallbIAD runs the metallb-iad binary and returns its output.
func metallbIAD(ctx context.Context, args ...string) string {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, binary(ctx), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(cmd.Run()).To(Succeed(), out.String())
	GinkgoWriter.Println(out.String())
	return out.String()
}

// service is a plain LoadBalancer Service with one port; annotations only
// when asked.
func service(ns, name string, port int, annotations string, annotated bool) string {
	meta := fmt.Sprintf("{name: %s, namespace: %s}", name, ns)
	if annotated {
		meta = fmt.Sprintf("{name: %s, namespace: %s, annotations: %s}", name, ns, annotations)
	}
	return fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: %s
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: %s}
  ports: [{port: %d}]
`, meta, name, port)
}
