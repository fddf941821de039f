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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/address-controller/internal/manager"
)

// The labels every object of every chart carries.
var standardLabels = []string{
	"app.kubernetes.io/name",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/version",
	"app.kubernetes.io/managed-by",
	"helm.sh/chart",
}

// renderings are the value sets each chart is rendered with: the defaults,
// and every option switched on.
func renderings(t *testing.T, chart string) map[string][]string {
	return map[string][]string{
		"default values": nil,
		"every option":   {"-f", allOptions(t, chart)},
	}
}

// TestRenderedObjectsAreAccepted renders every chart with default values and
// with every option switched on, and has a real API server accept every
// object with a server-side dry run, after applying the core chart's CRDs.
func TestRenderedObjectsAreAccepted(t *testing.T) {
	g := NewWithT(t)
	c := startCluster(t)
	ctx := t.Context()
	scheme := runtime.NewScheme()
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	k, err := client.New(c.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	applyChartCRDs(t, k)
	applyCRDs(t, k, monitoringCRDs(t)...)

	const namespace = "charts-dry-run"
	// The drivers' Roles go to the placeholder and MetalLB namespaces: the
	// defaults, and those the every-option values name. MetalLB's exist
	// before the chart; a placeholder namespace the chart creates is created
	// for real first.
	others := []string{"metallb-system", "metallb", "ipam-placeholders", "ipam-cilium-placeholders"}
	for _, ns := range append([]string{namespace}, others[:2]...) {
		makeUnlessFound(t, g, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}

	owner := t
	for _, chart := range allCharts {
		for name, args := range renderings(t, chart) {
			t.Run(chart+" with "+name, func(t *testing.T) {
				g := NewWithT(t)
				objs := render(t, chart, chart, namespace, args...)
				g.Expect(objs).NotTo(BeEmpty())
				for _, ns := range ofKind(objs, "Namespace") {
					// Another rendering may have made it already: it goes
					// when the whole test ends.
					makeUnlessFound(owner, g, ns.DeepCopy(), "the API server accepts Namespace %s", ns.GetName())
				}
				for _, obj := range objs {
					id := obj.GetKind() + " " + obj.GetName()
					// The manager's ClusterRole and Roles are controller-gen
					// output, copied verbatim: they carry no labels.
					generated := (obj.GetKind() == "ClusterRole" || obj.GetKind() == "Role") && obj.GetName() == chart+"-manager"
					if !generated {
						for _, l := range standardLabels {
							g.Expect(obj.GetLabels()).To(HaveKey(l), "%s lacks label %s", id, l)
						}
					}
					gvk := obj.GroupVersionKind()
					mapping, err := k.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
					g.Expect(err).NotTo(HaveOccurred(), "the API server serves %s", id)
					managerRole := (obj.GetKind() == "Role" || obj.GetKind() == "RoleBinding") && chart != coreChart &&
						obj.GetNamespace() != namespace
					switch {
					case mapping.Scope.Name() == meta.RESTScopeNameNamespace && managerRole:
						g.Expect(obj.GetNamespace()).To(BeElementOf(others), "%s is in the placeholder or MetalLB namespace", id)
					case mapping.Scope.Name() == meta.RESTScopeNameNamespace:
						g.Expect(obj.GetNamespace()).To(Equal(namespace), "%s is in the release namespace", id)
					default:
						g.Expect(obj.GetNamespace()).To(BeEmpty(), "%s is cluster-scoped", id)
					}
					if obj.GetKind() == "Namespace" {
						continue // created for real above
					}
					if obj.GetKind() == "CustomResourceDefinition" {
						// Applied for real above: the rendering goes over it, as helm upgrade does.
						g.Expect(k.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("charts-test"),
							client.ForceOwnership, client.DryRunAll)).To(Succeed(), "the API server accepts %s", id)
						continue
					}
					g.Expect(k.Create(ctx, obj, client.DryRunAll)).To(Succeed(), "the API server accepts %s", id)
				}
			})
		}
	}
}

// makeUnlessFound creates obj for real unless it exists, and has the kit
// remove it when owner ends if it made it.
func makeUnlessFound(owner *testing.T, g Gomega, obj client.Object, description ...any) {
	err := kit.Client.Create(context.Background(), obj)
	if apierrors.IsAlreadyExists(err) {
		return
	}
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred(), description...)
	kit.Own(owner, obj)
}

// applyChartCRDs applies the CRDs the core chart renders with default values,
// for real, and waits until each is established.
func applyChartCRDs(t *testing.T, k client.Client) {
	t.Helper()
	crds := ofKind(render(t, coreChart, coreChart, "charts-dry-run"), "CustomResourceDefinition")
	NewWithT(t).Expect(crds).To(HaveLen(4), "the core chart carries the CRDs of the four kinds")
	applyCRDObjects(t, k, "the core chart", crds...)
}

// monitoringCRDs are the Prometheus Operator's ServiceMonitor and
// PrometheusRule CRDs, which make prometheus-operator-crds copies from the
// pinned module.
func monitoringCRDs(t *testing.T) []string {
	t.Helper()
	dir := os.Getenv("PROMETHEUS_OPERATOR_CRDS")
	if dir == "" {
		t.Fatal("PROMETHEUS_OPERATOR_CRDS is not set: run make prometheus-operator-crds and set it to the folder it prints, or use make test")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("want the ServiceMonitor and PrometheusRule CRDs in %s, found %v (%v)", dir, files, err)
	}
	return files
}

// applyCRDs applies the CRDs in files for real and waits until each is
// established.
func applyCRDs(t *testing.T, k client.Client, files ...string) {
	t.Helper()
	g := NewWithT(t)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := decodeObjects(string(raw))
		g.Expect(err).NotTo(HaveOccurred(), f)
		applyCRDObjects(t, k, f, objs...)
	}
}

// applyCRDObjects applies crds, which come from source, for real and waits
// until each is established. A CRD the cluster did not serve goes when the
// test ends.
func applyCRDObjects(t *testing.T, k client.Client, source string, crds ...*unstructured.Unstructured) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	for _, obj := range crds {
		g.Expect(obj.GetKind()).To(Equal("CustomResourceDefinition"), source)
		obj.SetManagedFields(nil)
		if err := k.Get(ctx, client.ObjectKeyFromObject(obj), &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
			kit.Own(t, obj)
		}
		g.Expect(k.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("charts-test"), client.ForceOwnership)).To(Succeed(), source)
		g.Eventually(func(g Gomega) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(k.Get(ctx, client.ObjectKeyFromObject(obj), crd)).To(Succeed())
			g.Expect(crd.Status.Conditions).To(ContainElement(And(
				HaveField("Type", apiextensionsv1.Established),
				HaveField("Status", apiextensionsv1.ConditionTrue),
			)))
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), obj.GetName())
	}
}

// deployment returns the one Deployment among objs.
func deployment(g Gomega, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	deps := ofKind(objs, "Deployment")
	g.Expect(deps).To(HaveLen(1))
	return deps[0]
}

// managerContainer returns the manager container of a rendered Deployment.
func managerContainer(g Gomega, dep *unstructured.Unstructured) map[string]any {
	containers, _, err := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(containers).To(HaveLen(1))
	g.Expect(containers[0]).To(HaveKeyWithValue("name", "manager"))
	return containers[0].(map[string]any)
}

// appVersion reads the appVersion of chart.
func appVersion(t *testing.T, chart string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t, chart), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(string(raw))
	if err != nil || len(objs) != 1 {
		t.Fatalf("reading %s/Chart.yaml: %v", chart, err)
	}
	v, _, _ := unstructured.NestedString(objs[0].Object, "appVersion")
	return v
}

// TestRenderedManager checks what each chart renders for its manager: image,
// arguments, probes, security context, identity and its bindings.
func TestRenderedManager(t *testing.T) {
	const ns = "ipam-system"
	for _, tc := range []struct {
		chart, manager string
		// args are the manager's arguments with default values.
		args []string
		// roleNamespaces are where a driver's generated Roles are bound.
		roleNamespaces []string
		// policies are the admission policies on by default.
		policies []string
	}{{
		chart: coreChart, manager: "address-controller",
		args: []string{
			"--leader-elect", "--leader-election-namespace=" + ns,
			"--metrics-bind-address=:8443", "--health-probe-bind-address=:8081", "--zap-log-level=info",
		},
	}, {
		chart: driverChart, manager: "metallb-iad",
		args: []string{
			"--placeholder-namespace=" + ns, "--metallb-namespace=metallb-system",
			"--metallb-controller-selector=app.kubernetes.io/name=metallb,app.kubernetes.io/component=controller",
			"--leader-elect", "--leader-election-namespace=" + ns,
			"--metrics-bind-address=:8443", "--health-probe-bind-address=:8081", "--zap-log-level=info",
		},
		// The placeholder namespace defaults to the release namespace.
		roleNamespaces: []string{ns, "metallb-system"},
		policies:       []string{"metallb-iad-service-writes", "metallb-iad-class-parameters"},
	}, {
		chart: ciliumChart, manager: "cilium-iad",
		args: []string{
			"--placeholder-namespace=" + ns,
			"--leader-elect", "--leader-election-namespace=" + ns,
			"--metrics-bind-address=:8443", "--health-probe-bind-address=:8081", "--zap-log-level=info",
		},
		// Its pools are cluster-scoped: only the placeholders are namespaced.
		roleNamespaces: []string{ns},
		policies:       []string{"cilium-iad-service-writes", "cilium-iad-class-parameters"},
	}} {
		t.Run(tc.chart+" with default values", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, tc.chart, "any-release-name", ns)
			dep := deployment(g, objs)
			g.Expect(dep.GetName()).To(Equal(tc.manager))
			g.Expect(dep.Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("replicas", BeNumerically("==", 1))))
			m := managerContainer(g, dep)
			g.Expect(m).To(HaveKeyWithValue("image", "ghcr.io/cozystack/"+tc.manager+":"+appVersion(t, tc.chart)))
			g.Expect(m).To(HaveKeyWithValue("args", BeEquivalentTo(toAny(tc.args))))
			g.Expect(m).To(HaveKeyWithValue("livenessProbe", HaveKeyWithValue("httpGet", HaveKeyWithValue("path", "/healthz"))))
			g.Expect(m).To(HaveKeyWithValue("readinessProbe", HaveKeyWithValue("httpGet", HaveKeyWithValue("path", "/readyz"))))
			g.Expect(m).To(HaveKeyWithValue("ports", ContainElements(
				And(HaveKeyWithValue("name", "https"), HaveKeyWithValue("containerPort", BeNumerically("==", 8443))),
				And(HaveKeyWithValue("name", "probes"), HaveKeyWithValue("containerPort", BeNumerically("==", 8081))),
			)))
			g.Expect(m).To(HaveKeyWithValue("env", ContainElement(And(
				HaveKeyWithValue("name", manager.MemoryLimitEnv),
				HaveKeyWithValue("valueFrom", HaveKeyWithValue("resourceFieldRef", And(
					HaveKeyWithValue("containerName", "manager"), HaveKeyWithValue("resource", "limits.memory"))))))),
				"the manager derives the Go runtime's memory limit from the container's")
			g.Expect(m).To(HaveKeyWithValue("securityContext", And(
				HaveKeyWithValue("runAsNonRoot", true),
				HaveKeyWithValue("readOnlyRootFilesystem", true),
				HaveKeyWithValue("allowPrivilegeEscalation", false),
				HaveKeyWithValue("capabilities", HaveKeyWithValue("drop", ConsistOf("ALL"))),
				HaveKeyWithValue("seccompProfile", HaveKeyWithValue("type", "RuntimeDefault")),
			)))
			g.Expect(dep.Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("template", HaveKeyWithValue("spec",
				HaveKeyWithValue("serviceAccountName", tc.manager)))))

			sas := ofKind(objs, "ServiceAccount")
			g.Expect(sas).To(HaveLen(1))
			g.Expect(sas[0].GetName()).To(Equal(tc.manager))
			g.Expect(sas[0].GetNamespace()).To(Equal(ns))

			subject := map[string]any{"kind": "ServiceAccount", "name": tc.manager, "namespace": ns}
			bindings := map[string]map[string]any{}
			for _, b := range ofKind(objs, "ClusterRoleBinding") {
				bindings[b.GetName()] = b.Object
			}
			g.Expect(bindings).To(HaveKeyWithValue(tc.manager+"-manager", And(
				HaveKeyWithValue("roleRef", HaveKeyWithValue("name", tc.manager+"-manager")),
				HaveKeyWithValue("subjects", ConsistOf(subject)),
			)), "the manager is bound to the ClusterRole controller-gen writes")
			g.Expect(bindings).To(HaveKeyWithValue(tc.manager+"-metrics-auth",
				HaveKeyWithValue("subjects", ConsistOf(subject))))
			roleBindings := map[string]any{}
			for _, b := range ofKind(objs, "RoleBinding") {
				g.Expect(b.Object).To(HaveKeyWithValue("subjects", ConsistOf(subject)))
				roleBindings[b.GetNamespace()+"/"+b.GetName()] = b.Object["roleRef"]
			}
			want := gstruct.Keys{ns + "/" + tc.manager + "-leader-election": HaveKeyWithValue("name", tc.manager+"-leader-election")}
			for _, where := range tc.roleNamespaces {
				want[where+"/"+tc.manager+"-manager"] = HaveKeyWithValue("name", tc.manager+"-manager")
			}
			g.Expect(roleBindings).To(gstruct.MatchAllKeys(want), "the leader-election Role is bound in the release namespace, the driver's Roles where they are")

			svcs := ofKind(objs, "Service")
			g.Expect(svcs).To(HaveLen(1))
			g.Expect(svcs[0].Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("ports", ConsistOf(And(
				HaveKeyWithValue("name", "https"), HaveKeyWithValue("port", BeNumerically("==", 8443)))))))

			g.Expect(ofKind(objs, "Namespace")).To(BeEmpty())
			// The tenant policies are off by default; a driver's own
			// serviceWritePolicy is on, bound to its ServiceAccount, and so
			// is its classParametersPolicy.
			names := func(kind string) []string {
				var out []string
				for _, o := range ofKind(objs, kind) {
					out = append(out, o.GetName())
				}
				return out
			}
			g.Expect(names("ValidatingAdmissionPolicy")).To(ConsistOf(toAny(tc.policies)...))
			g.Expect(names("ValidatingAdmissionPolicyBinding")).To(ConsistOf(toAny(tc.policies)...))
			for _, p := range ofKind(objs, "ValidatingAdmissionPolicy") {
				if !strings.HasSuffix(p.GetName(), "-service-writes") {
					continue
				}
				conditions, _, _ := unstructured.NestedSlice(p.Object, "spec", "matchConditions")
				g.Expect(conditions).To(ContainElements(
					HaveKeyWithValue("expression", ContainSubstring(`"system:serviceaccount:`+ns+`:`+tc.manager+`"`)),
					HaveKeyWithValue("expression", ContainSubstring(`request.namespace != "`+ns+`"`)),
				), "the policy holds the chart's ServiceAccount outside its placeholder namespace")
			}
		})

		t.Run(tc.chart+" without leader election", func(t *testing.T) {
			g := NewWithT(t)
			m := managerContainer(g, deployment(g, render(t, tc.chart, tc.chart, ns, "--set", "leaderElection=false")))
			g.Expect(m).To(HaveKeyWithValue("args", And(
				Not(ContainElement("--leader-elect")),
				ContainElement("--metrics-bind-address=:8443"),
			)))
		})

		t.Run(tc.chart+" with image tag, log level and extra arguments", func(t *testing.T) {
			g := NewWithT(t)
			m := managerContainer(g, deployment(g, render(t, tc.chart, tc.chart, ns,
				"--set", "image.tag=v9.8.7", "--set", "logLevel=debug", "--set", "extraArgs={--enable-http2}")))
			g.Expect(m).To(HaveKeyWithValue("image", "ghcr.io/cozystack/"+tc.manager+":v9.8.7"))
			args := m["args"].([]any)
			g.Expect(args).To(ContainElement("--zap-log-level=debug"))
			g.Expect(args[len(args)-1]).To(Equal("--enable-http2"), "extra arguments come last")
		})
	}

	for chart, args := range map[string][]string{
		driverChart: {"--set", "metallbNamespace=metallb"},
		ciliumChart: nil,
	} {
		t.Run(chart+" creates a placeholder namespace other than its own", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, chart, chart, ns, append([]string{"--set", "placeholderNamespace=ipam-placeholders"}, args...)...)
			g.Expect(managerContainer(g, deployment(g, objs))).To(HaveKeyWithValue("args",
				ContainElement("--placeholder-namespace=ipam-placeholders")))
			namespaces := ofKind(objs, "Namespace")
			g.Expect(namespaces).To(HaveLen(1))
			g.Expect(namespaces[0].GetName()).To(Equal("ipam-placeholders"))
			g.Expect(namespaces[0].GetAnnotations()).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"),
				"uninstalling the chart never deletes the reservations")
			var bound []string
			for _, b := range ofKind(objs, "RoleBinding") {
				if b.GetName() == chart+"-manager" {
					bound = append(bound, b.GetNamespace())
				}
			}
			g.Expect(bound).To(ContainElement("ipam-placeholders"), "the driver creates and deletes Services there")
			g.Expect(bound).NotTo(ContainElement(ns), "not in the release namespace")
		})

		t.Run(chart+" does not create its own namespace as placeholder namespace", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, chart, chart, ns, append([]string{"--set", "placeholderNamespace=" + ns}, args...)...)
			g.Expect(ofKind(objs, "Namespace")).To(BeEmpty())
		})
	}

	t.Run("metallb-iad passes its MetalLB namespace", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, driverChart, driverChart, ns, "--set", "metallbNamespace=metallb")
		g.Expect(managerContainer(g, deployment(g, objs))).To(HaveKeyWithValue("args", ContainElement("--metallb-namespace=metallb")))
	})

	t.Run("metallb-iad passes the selector of MetalLB's controller Pods, and refuses an empty one", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, driverChart, driverChart, ns, "--set", "metallbControllerSelector=app=metallb\\,component=controller")
		g.Expect(managerContainer(g, deployment(g, objs))).To(HaveKeyWithValue("args",
			ContainElement("--metallb-controller-selector=app=metallb,component=controller")))
		out, err := runHelm(t, "template", driverChart, chartDir(t, driverChart), "--namespace", ns, "--set", "metallbControllerSelector=")
		g.Expect(err).To(MatchError(ContainSubstring("metallbControllerSelector")), out)
	})
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
