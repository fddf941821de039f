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
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/images"
	"github.com/cozystack/address-controller/test/promtext"
	"github.com/cozystack/address-controller/test/testkit"
)

// metallbProvisioner is the MetalLB driver's provisioner name.
const metallbProvisioner = "metallb.drivers.local.sdn.cozystack.io"

// TestMetalLBFlagship installs MetalLB from its own chart (the one in its
// Go module, charts/metallb: the controller a Deployment, the speaker a
// DaemonSet on every node, in layer 2), then walks the flagship flow on it
// twice, each time with the core's and the MetalLB driver's charts
// installed anew: as installed by default (one replica each), and with two
// replicas each whose leaders are deleted in the middle of the handoff.
//
// Artefacts: the images metallb-controller and metallb-speaker (MetalLB's
// chart, values controller.image.tag, speaker.image.tag, their pullPolicy,
// and speaker.frr.enabled=false: the image holds the speaker without FRR);
// the subtests name theirs.
func TestMetalLBFlagship(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	dir, err := images.ChartDir(ctx, root, metallbControllerImage)
	g.Expect(err).NotTo(HaveOccurred())
	controllerTag, speakerTag := tagOf(metallbControllerImage), tagOf(metallbSpeakerImage)
	began := time.Now()
	// The cluster installed MetalLB's CRDs for its own MetalLB; the chart
	// takes them over, as it would those of an earlier install.
	install(t, g, "metallb", dir, cluster.MetalLBNamespace, "--take-ownership",
		"controller.image.tag="+controllerTag, "controller.image.pullPolicy=Never",
		"speaker.image.tag="+speakerTag, "speaker.image.pullPolicy=Never",
		"speaker.frr.enabled=false", "--set-json=controller.tolerations="+lostNodeTolerationsJSON())
	g.Eventually(func(g Gomega) {
		dep, err := cs.AppsV1().Deployments(cluster.MetalLBNamespace).Get(ctx, "metallb-controller", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(available(dep)).To(BeTrue(), "the controller is not Available: %+v", dep.Status)
		ds, err := cs.AppsV1().DaemonSets(cluster.MetalLBNamespace).Get(ctx, "metallb-speaker", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ds.Status.DesiredNumberScheduled).To(BeNumerically("==", len(nodes.Nodes)))
		g.Expect(ds.Status.NumberReady).To(Equal(ds.Status.DesiredNumberScheduled), "speakers not ready: %+v", ds.Status)
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	t.Logf("MetalLB's controller and %d speakers were ready %s after helm install", len(nodes.Nodes), time.Since(began).Round(time.Millisecond))

	t.Run("Handoff", testHandoff)
	t.Run("LeadersDeletedMidHandoff", testLeadersDeletedMidHandoff)
	t.Run("PodsDeletedUnderLoad", testPodsDeletedUnderLoad)
	t.Run("UpgradeFromPrevious", testUpgradeFromPrevious)
	// Last: a stopped node stays stopped.
	t.Run("NodeStopped", testNodeStopped)
}

// testHandoff installs the core's and the MetalLB driver's charts with
// their defaults and walks the flagship flow to its end: a claim of a class
// whose addresses are on the nodes' segment is Bound, Service A, which
// names the claim, gets its address, and a client on the segment reaches
// A's Pod through it (the speaker Pod answers ARP for it, kube-proxy
// delivers); A is deleted, a placeholder holds the address again and the
// client's answer from A ends; Service B, which names the same claim and
// selects another workload, gets the same address, and the client reaches
// B's Pod, whose answer differs from A's.
//
// Artefacts: address-controller and metallb-iad (as TestCoreChart, and the
// driver chart's deployment.yaml, role.yaml, rbac/*,
// placeholder_namespace.yaml, class_parameters_policy.yaml and
// service_write_policy.yaml with their defaults; values metallbNamespace
// and placeholderNamespace at their defaults: metallb-system, and the
// release namespace for the placeholders); the test's image hello.
func testHandoff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	installManager(t, g, harness.Core, harness.CoreNamespace, coreImage)
	began := installManager(t, g, harness.Driver, harness.DriverNamespace, driverImage)
	f := claimAndServe(t, g)
	t.Logf("The client reached Service A at %s %s after the driver's helm install", f.address, time.Since(began).Round(time.Millisecond))

	// A placeholder in the driver's release namespace holds the address
	// again; the claim keeps it.
	g.Expect(cs.CoreV1().Services(f.ns).Delete(ctx, "a", metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(kit.Holders(g, f.address)).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).
		Should(ConsistOf(HavePrefix(harness.DriverNamespace+"/")), func() string { return diagnose(ctx, harness.DriverNamespace) })
	g.Expect(kit.StateOfClaim(g, f.ns, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(func() error {
		_, err := nodes.Client.Get(ctx, "http://"+f.address+"/")
		return err
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HaveOccurred(), "the client still reaches A's Pod")

	createB(g, f)
	reachB(t, g, f)
	restartMetalLB(t, g, f)
}

// restartMetalLB deletes MetalLB's controller Pod. The start of its
// replacement is the driver's direct signal that MetalLB ignores single
// Service events until its first full pass (driver's metric
// metallb_iad_metallb_starts_total{signal="pod"}, which the chart's default
// metallbControllerSelector and the Role in MetalLB's namespace make
// possible). The driver's next writes wait for MetalLB to answer its
// probes again from single events (metallb_iad_probes_total
// {answer="single-events"} grows): Service B deleted and Service A created
// again, A carries the address and the client reaches a.
func restartMetalLB(t *testing.T, g Gomega, f flow) {
	t.Helper()
	ctx := context.Background()
	scrape := metricsOf(t, g, harness.Driver, harness.DriverNamespace, f.ns, "scraper", true)
	series := func(name, label, value string) func() (float64, error) {
		return func() (float64, error) {
			code, body, err := scrape()
			if err != nil || code != http.StatusOK {
				return 0, fmt.Errorf("scrape: %d, %v", code, err)
			}
			m, err := promtext.Parse(strings.NewReader(body), name)
			sum := 0.0
			for _, s := range m[name] {
				if label == "" || s.Labels[label] == value {
					sum += s.Value
				}
			}
			return sum, err
		}
	}
	g.Eventually(series("metallb_iad_metallb_ready", "", "")).WithTimeout(time.Minute).Should(Equal(1.0))
	g.Expect(series("metallb_iad_metallb_starts_total", "signal", "pod")()).To(BeZero(), "no start of MetalLB yet")
	answers, err := series("metallb_iad_probes_total", "answer", "single-events")()
	g.Expect(err).NotTo(HaveOccurred())

	pods, err := cs.CoreV1().Pods(cluster.MetalLBNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=controller"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pods.Items).To(HaveLen(1))
	deleted := time.Now()
	g.Expect(cs.CoreV1().Pods(cluster.MetalLBNamespace).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(series("metallb_iad_metallb_starts_total", "signal", "pod")).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).
		Should(BeNumerically(">=", 1), func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	t.Logf("The driver saw MetalLB's new controller start %s after the old Pod was deleted", time.Since(deleted).Round(time.Millisecond))

	// The driver's next write waits for a new answer from single events.
	g.Expect(cs.CoreV1().Services(f.ns).Delete(ctx, "b", metav1.DeleteOptions{})).To(Succeed())
	svc := b.Service(f.ns, "a", b.ForClaim("web"))
	svc.Spec.Ports[0].TargetPort = intstr.FromString("http")
	kit.Create(g, svc)
	g.Eventually(kit.Holders(g, f.address)).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).
		Should(Equal([]string{f.ns + "/a"}), func() string { return diagnose(ctx, harness.DriverNamespace) })
	t.Logf("Service A carried the address again %s after MetalLB's old Pod was deleted", time.Since(deleted).Round(time.Millisecond))
	g.Expect(series("metallb_iad_probes_total", "answer", "single-events")()).To(BeNumerically(">", answers),
		"the driver wrote after MetalLB's start without a new answer")
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+f.address+"/")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HavePrefix("hello from a-"),
		func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
}

// flow is a claim of class Bound to address in namespace ns, with Service
// A naming it, and the workloads a and b, the test's hello image, each
// answering "hello from <its Pod>".
type flow struct {
	class, ns, address string
}

// claimAndServe walks the flagship flow up to the client's answer from
// Service A: a class whose addresses are on the segment (.200/29), where the
// client asks for them by ARP; a claim of it Bound; the workloads a and b;
// Service A, naming the claim and selecting a, gets the claim's address;
// the client gets a's page from it.
func claimAndServe(t *testing.T, g Gomega) flow {
	t.Helper()
	ctx := context.Background()
	first := nodes.Segment.Addr().As4()
	first[3] = 200
	pool := netip.PrefixFrom(netip.AddrFrom4(first), 29)
	class := testkit.Name(t)
	kit.Make(t, g, b.Class(class, metallbProvisioner, b.ClassReclaim(v1alpha1.ReclaimDelete),
		b.Parameters(fmt.Sprintf(`{"addresses": [%q]}`, pool))))
	ns := kit.Namespace(t)
	created := time.Now()
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web")).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).
		Should(HaveField("Phase", v1alpha1.ClaimBound), func() string { return diagnose(ctx, harness.DriverNamespace) })
	t.Logf("The claim was Bound %s after it was created", time.Since(created).Round(time.Millisecond))
	claimed := kit.Claim(g, ns, "web").Status.Addresses
	g.Expect(claimed).To(HaveLen(1))
	address := claimed[0].Address
	g.Expect(pool.Contains(netip.MustParseAddr(address))).To(BeTrue(), "%s outside the class's %s", address, pool)

	runHello(g, ns, "a")
	runHello(g, ns, "b")
	svc := b.Service(ns, "a", b.ForClaim("web"))
	svc.Spec.Ports[0].TargetPort = intstr.FromString("http")
	kit.Create(g, svc)
	g.Eventually(kit.Ingress(g, ns, "a")).WithTimeout(time.Minute).Should(ConsistOf(address),
		func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+address+"/")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HavePrefix("hello from a-"),
		func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	return flow{class: class, ns: ns, address: address}
}

// createB creates Service B, which names the flow's claim and selects the
// workload b.
func createB(g Gomega, f flow) {
	svc := b.Service(f.ns, "b", b.ForClaim("web"))
	svc.Spec.Ports[0].TargetPort = intstr.FromString("http")
	kit.Create(g, svc)
}

// reachB waits for Service B to be the address's only holder and for the
// client to get b's page from the address.
func reachB(t *testing.T, g Gomega, f flow) {
	t.Helper()
	ctx := context.Background()
	g.Eventually(kit.Holders(g, f.address)).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).
		Should(Equal([]string{f.ns + "/b"}), func() string { return diagnose(ctx, harness.DriverNamespace) })
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+f.address+"/")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(HavePrefix("hello from b-"),
		func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
}

// runHello runs the test's hello image as the Deployment name in ns, its
// Pods labelled app=name (what the builder's Service of that name selects),
// serving on the port named http, and evicted 5 s after their node is lost.
func runHello(g Gomega, ns, name string) {
	labels := map[string]string{"app": name}
	_, err := cs.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "hello", Image: helloRef, ImagePullPolicy: corev1.PullNever,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					}},
					Tolerations: lostNodeTolerations(),
				},
			},
		},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
}

// tagOf is the tag of the reference of the image called name.
func tagOf(name string) string { return tag(archives[name].Ref) }
