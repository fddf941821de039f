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
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/importer"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/plugin"
	b "github.com/cozystack/address-controller/test/builder"
)

// kubectlIPAM runs `kubectl ipam` as its binary does, with args, and
// returns its exit code, stdout and stderr.
func kubectlIPAM(args ...string) (int, string, string) {
	var stdout, stderr syncBuffer
	code := plugin.Main(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// syncBuffer is a buffer one goroutine writes while another reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// importableInTwo makes a class that can import the Service "web" of each
// of two new namespaces (see importable).
func importableInTwo(t *testing.T, g Gomega) (nsA, nsB, class string, held map[string]string) {
	nsA, nsB = kit.Namespace(t), kit.Namespace(t)
	class, held = importable(t, g, nil, nsA, nsB)
	return nsA, nsB, class, held
}

// importable makes, in each namespace, a Service "web" holding an address
// an auto-assigned pool of the admin's own gave it, and a MetalLB class
// over the pool's range (with opts), which the pool keeps from rendering.
// It returns the class and each Service's address by namespace.
func importable(t *testing.T, g Gomega, opts []b.ClassOption, namespaces ...string) (string, map[string]string) {
	v4, _ := mt.FreshRange()
	legacyPool(t, g, []string{v4}, namespaces...)
	held := map[string]string{}
	for _, ns := range namespaces {
		kit.Create(g, b.Service(ns, "web"))
	}
	for _, ns := range namespaces {
		g.Eventually(lbIngress(ns, "web"), timeout, tick).ShouldNot(BeEmpty(), ns)
		held[ns] = lbIngress(ns, "web")()
	}
	class := "plugin-" + suffix(namespaces[0])
	blockedClass(t, g, class, []string{v4}, opts...)
	return class, held
}

// kubeconfigWithContexts writes a kubeconfig whose current context points
// at no API server, and whose context "here" is the test cluster's admin
// with namespace ns.
func kubeconfigWithContexts(t *testing.T, g Gomega, ns string) string {
	cfg, err := clientcmd.LoadFromFile(mt.Cluster.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	current := cfg.Contexts[cfg.CurrentContext]
	g.Expect(current).NotTo(BeNil())
	cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.Contexts["nowhere"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: current.AuthInfo}
	cfg.Contexts["here"] = &clientcmdapi.Context{Cluster: current.Cluster, AuthInfo: current.AuthInfo, Namespace: ns}
	cfg.CurrentContext = "nowhere"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// TestPluginReadsKubectlFlags: `kubectl ipam import` reads the kubeconfig
// as kubectl does. The current context, --context, the context's namespace,
// -n, -A, --as and --as-group each decide what it reads; and the class's
// provisioner picks the driver, refusing a driver that cannot import.
func TestPluginReadsKubectlFlags(t *testing.T) {
	g := begin(t)
	nsA, nsB, class, held := importableInTwo(t, g)
	kubeconfig := kubeconfigWithContexts(t, g, nsA)
	run := func(args ...string) (int, string, string) {
		return kubectlIPAM(append([]string{"import", "--kubeconfig", kubeconfig, "--class", class, "--placeholder-namespace", placeholderNS}, args...)...)
	}

	// The current context's API server does not answer.
	code, _, stderr := run()
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("127.0.0.1:1"))

	// --context: its namespace is the default scope.
	code, stdout, stderr := run("--context", "here")
	g.Expect(code).To(Equal(0), stderr)
	t.Log("\n" + stdout)
	g.Expect(lineOf(stdout, nsA+"/web")).To(ContainSubstring(held[nsA]))
	g.Expect(stdout).NotTo(ContainSubstring(nsB + "/web"))
	g.Expect(stdout).To(ContainSubstring(fmt.Sprintf("class %s: 1 to import, 0 imported already, 0 skipped (namespace %s)", class, nsA)))

	// -n overrides it, -A lifts it.
	code, stdout, stderr = run("--context", "here", "-n", nsB)
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(lineOf(stdout, nsB+"/web")).To(ContainSubstring(held[nsB]))
	g.Expect(stdout).NotTo(ContainSubstring(nsA + "/web"))
	code, stdout, stderr = run("--context", "here", "-A")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(lineOf(stdout, nsA+"/web")).To(ContainSubstring(" import"))
	g.Expect(lineOf(stdout, nsB+"/web")).To(ContainSubstring(" import"))
	g.Expect(stdout).To(ContainSubstring("(all namespaces)"))

	// --as: the user may read nothing; --as-group makes it an admin.
	code, _, stderr = run("--context", "here", "--as", "plugin-nobody")
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(And(ContainSubstring("forbidden"), ContainSubstring(`User "plugin-nobody"`)))
	code, stdout, stderr = run("--context", "here", "--as", "plugin-nobody", "--as-group", "system:masters")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(lineOf(stdout, nsA+"/web")).To(ContainSubstring(" import"))
	g.Expect(importedClaims(g, nsA, nsB)).To(BeEmpty(), "a dry run creates nothing")

	// The class's provisioner picks the driver.
	cilium := "plugin-cilium-" + suffix(nsA)
	kit.Make(t, g, b.Class(cilium, v1alpha1.ProvisionerCilium, b.Parameters(`{"addresses": ["192.0.2.0/28"]}`)))
	code, _, stderr = kubectlIPAM("import", "--kubeconfig", kubeconfig, "--context", "here", "--class", cilium)
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("cilium-iad cannot import: its backend has no import capability"))
	code, _, stderr = kubectlIPAM("import", "--kubeconfig", kubeconfig, "--context", "here", "--class", "no-such-class-"+nsA)
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("reading IPAddressClass no-such-class-" + nsA))
}

// TestPluginOutputFormats: -o json and -o yaml write the same versioned
// document, which parses back and says what the cluster holds; --apply
// adds each Service's result, keeps stdout parseable and says on stderr,
// per Service, what it waits for; undo and handover write theirs too.
func TestPluginOutputFormats(t *testing.T) {
	g := begin(t)
	nsA, nsB, class, held := importableInTwo(t, g)
	run := func(args ...string) (int, string, string) {
		return kubectlIPAM(append([]string{"import", "--kubeconfig", mt.Cluster.Kubeconfig, "--class", class, "-A",
			"--placeholder-namespace", placeholderNS, "--wait-timeout", "1m"}, args...)...)
	}
	services := map[string]*corev1.Service{nsA: kit.Service(g, nsA, "web"), nsB: kit.Service(g, nsB, "web")}

	code, stdout, stderr := run("-o", "json")
	g.Expect(code).To(Equal(0), stderr)
	var fromJSON importer.ImportPlan
	g.Expect(json.Unmarshal([]byte(stdout), &fromJSON)).To(Succeed(), stdout)
	code, stdout, stderr = run("-o", "yaml")
	g.Expect(code).To(Equal(0), stderr)
	t.Log("\n" + stdout)
	var fromYAML importer.ImportPlan
	g.Expect(yaml.UnmarshalStrict([]byte(stdout), &fromYAML)).To(Succeed(), stdout)
	g.Expect(fromYAML).To(Equal(fromJSON))
	g.Expect(fromJSON.APIVersion).To(Equal(importer.OutputAPIVersion))
	g.Expect(fromJSON.Kind).To(Equal(importer.KindImportPlan))
	g.Expect(fromJSON.Class).To(Equal(class))
	g.Expect(fromJSON.Driver).To(Equal("metallb-iad"))
	g.Expect(fromJSON.Applied).To(BeFalse())
	g.Expect(fromJSON.Namespaces).To(BeEmpty(), "-A: every namespace")
	mine := func(imports []importer.PlannedImport) []importer.PlannedImport {
		return slices.DeleteFunc(slices.Clone(imports), func(im importer.PlannedImport) bool { return services[im.Namespace] == nil })
	}
	want := make([]importer.PlannedImport, 0, len(services))
	for _, ns := range sortedKeys(services) {
		want = append(want, importer.PlannedImport{
			PlannedService: importer.PlannedService{Namespace: ns, Service: "web", ServiceUID: services[ns].UID, Addresses: []string{held[ns]}},
			Claim:          "web", Family: v1alpha1.IPv4, Action: importer.ActionImport})
	}
	g.Expect(mine(fromJSON.Imports)).To(Equal(want))
	g.Expect(importedClaims(g, nsA, nsB)).To(BeEmpty(), "a dry run creates nothing")

	// --apply -o json: stdout is the document alone, with the results;
	// stderr has a line per Service as each wait starts and ends.
	code, stdout, stderr = run("-o", "json", "--apply")
	g.Expect(code).To(Equal(0), stderr)
	t.Log("\n" + stderr)
	var applied importer.ImportPlan
	g.Expect(json.Unmarshal([]byte(stdout), &applied)).To(Succeed(), stdout)
	g.Expect(applied.Applied).To(BeTrue())
	for _, im := range mine(applied.Imports) {
		g.Expect(im.Result).To(HaveField("Bound", BeTrue()), im.Namespace)
		g.Expect(im.Result.Error).To(BeEmpty(), im.Namespace)
	}
	for _, ns := range sortedKeys(services) {
		g.Expect(stderr).To(MatchRegexp(`\[\d/\d\] Service %s/web: waiting up to 1m0s for IPAddressClaim %s/web to be Bound\n`, ns, ns))
		g.Expect(stderr).To(MatchRegexp(`\[\d/\d\] Service %s/web: done in [0-9.]+m?s\n`, ns))
	}
	g.Expect(importedClaims(g, nsA, nsB)).To(HaveLen(2))

	// A rerun has nothing left to do.
	code, stdout, stderr = run("-o", "yaml")
	g.Expect(code).To(Equal(0), stderr)
	var again importer.ImportPlan
	g.Expect(yaml.UnmarshalStrict([]byte(stdout), &again)).To(Succeed(), stdout)
	for _, im := range mine(again.Imports) {
		g.Expect(im.Action).To(Equal(importer.ActionImported), im.Namespace)
	}

	// The handover's plan: the class's pool, then the admin's pool shrinks.
	code, stdout, stderr = run("--handover", "-o", "json")
	g.Expect(code).To(Equal(0), stderr)
	var handover importer.HandoverPlan
	g.Expect(json.Unmarshal([]byte(stdout), &handover)).To(Succeed(), stdout)
	g.Expect(handover.Kind).To(Equal(importer.KindHandoverPlan))
	g.Expect(handover.Steps).NotTo(BeEmpty())
	g.Expect(handover.Blockers).To(BeEmpty())
	g.Expect(handover.Result).To(BeNil(), "a dry run")

	// Undo, in both formats: the same plan; applied, every import goes.
	code, stdout, stderr = run("--undo", "-o", "json")
	g.Expect(code).To(Equal(0), stderr)
	var undoJSON, undoYAML, undone importer.UndoPlan
	g.Expect(json.Unmarshal([]byte(stdout), &undoJSON)).To(Succeed(), stdout)
	code, stdout, stderr = run("--undo", "-o", "yaml")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(yaml.UnmarshalStrict([]byte(stdout), &undoYAML)).To(Succeed(), stdout)
	g.Expect(undoYAML).To(Equal(undoJSON))
	g.Expect(undoJSON.Undos).To(HaveLen(2))
	for _, u := range undoJSON.Undos {
		g.Expect(u).To(And(HaveField("Claim", "web"), HaveField("Service", "web"), HaveField("Action", "remove"), HaveField("Result", BeNil())))
	}
	code, stdout, stderr = run("--undo", "--apply", "-o", "yaml")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(yaml.UnmarshalStrict([]byte(stdout), &undone)).To(Succeed(), stdout)
	for _, u := range undone.Undos {
		g.Expect(u.Result).To(Equal(&importer.UndoResult{Removed: true}), u.Namespace)
		g.Expect(stderr).To(ContainSubstring(fmt.Sprintf("Service %s/web: waiting up to 1m0s for IPAddressClaim %s/web and IPAddress ", u.Namespace, u.Namespace)))
	}
	g.Expect(importedClaims(g, nsA, nsB)).To(BeEmpty())

	// Text stays the default, and an unknown format is refused.
	code, stdout, _ = run()
	g.Expect(code).To(Equal(0))
	g.Expect(stdout).To(HavePrefix("SERVICE"))
	code, _, stderr = run("-o", "wide")
	g.Expect(code).To(Equal(2))
	g.Expect(stderr).To(ContainSubstring(`--output must be text, json or yaml, not "wide"`))
}

// TestPluginWaitTimeoutIsPerWait: of three imports, the second's claim
// waits for its namespace to be let into the class, which never happens,
// and the third's for the same, which happens once the second's wait has
// failed. The second fails alone after --wait-timeout, naming its Service
// and what it waited for; the third, whose wait begins then, still has its
// own --wait-timeout and is imported, though the run as a whole lasts
// longer than one --wait-timeout.
func TestPluginWaitTimeoutIsPerWait(t *testing.T) {
	g := begin(t)
	allowed := map[string]string{"plugin.test/allowed": "yes"}
	nsOK, nsX, nsY := kit.Namespace(t), kit.Namespace(t), kit.Namespace(t)
	// The imports run in the order of their Services' keys.
	stalls, late := min(nsX, nsY), max(nsX, nsY)
	g.Expect(setLabels(nsOK, allowed)).To(Succeed())
	class, _ := importable(t, g, []b.ClassOption{b.NamespaceSelector(allowed)}, nsOK, stalls, late)

	const wait = 8 * time.Second
	var stdout, stderr syncBuffer
	failed := fmt.Sprintf("Service %s/web: failed after ", stalls)
	// Once the stalled wait has failed, the late namespace is let in.
	ran, letIn := make(chan struct{}), make(chan error, 1)
	go func() {
		for over := false; ; {
			if strings.Contains(stderr.String(), failed) {
				letIn <- setLabels(late, allowed)
				return
			}
			if over {
				letIn <- errors.New("the stalled wait never failed")
				return
			}
			select {
			case <-ran:
				over = true
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	began := time.Now()
	code := plugin.Main(context.Background(), []string{"import", "--kubeconfig", mt.Cluster.Kubeconfig, "--class", class,
		"-n", strings.Join([]string{nsOK, stalls, late}, ","), "--placeholder-namespace", placeholderNS,
		"--wait-timeout", wait.String(), "--apply"}, &stdout, &stderr)
	took := time.Since(began)
	close(ran)
	g.Expect(<-letIn).To(Succeed())
	t.Logf("took %v\n%s\n%s", took, stdout.String(), stderr.String())
	g.Expect(code).To(Equal(1))
	g.Expect(stderr.String()).To(ContainSubstring(importer.ErrIncomplete.Error()))
	g.Expect(took).To(BeNumerically(">", wait))

	// The stalled wait: its own deadline, a message naming the Service,
	// the claim and why it is not Bound.
	g.Expect(stderr.String()).To(MatchRegexp(`\[\d/3\] %s8(\.\d)?s: Service %s/web: IPAddressClaim %s/web not Bound in time: waited 8s \(last seen: phase Pending, %s: `,
		regexp.QuoteMeta(failed), stalls, stalls, v1alpha1.ReasonClassNotAllowed))
	g.Expect(resultOf(stdout.String(), stalls+"/web")).To(ContainSubstring("FAILED: Service " + stalls + "/web: IPAddressClaim " + stalls + "/web not Bound in time"))
	g.Expect(kit.Claim(g, stalls, "web").Status.Phase).NotTo(Equal(v1alpha1.ClaimBound))

	// The others: imported, the late one after the stalled one failed.
	for _, ns := range []string{nsOK, late} {
		g.Expect(stderr.String()).To(MatchRegexp(`\[\d/3\] Service %s/web: done in `, ns))
		g.Expect(resultOf(stdout.String(), ns+"/web")).To(And(ContainSubstring(" imported"), Not(ContainSubstring("FAILED"))))
		g.Expect(kit.Claim(g, ns, "web").Status.Phase).To(Equal(v1alpha1.ClaimBound))
	}
	g.Expect(strings.Index(stderr.String(), failed)).To(BeNumerically("<", strings.Index(stderr.String(), "Service "+late+"/web: done in ")))
}

// resultOf is the line of the results table (the last table of an applied
// import) that starts with key and a space.
func resultOf(out, key string) string {
	_, results, _ := strings.Cut(out, "RESULT\n")
	return lineOf(results, key)
}

// setLabels adds labels to namespace ns.
func setLabels(ns string, labels map[string]string) error {
	obj := &corev1.Namespace{}
	obj.Name = ns
	raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	return k8s.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, raw))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
