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

package node_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/node"
	"github.com/cozystack/address-controller/test/testkit"
)

// Images the test builds; the references name a registry that does not
// exist, so only an imported image can run.
const (
	pauseRef = "registry.invalid/node-harness/pause:test"
	helloRef = "registry.invalid/node-harness/hello:test"
	// inclusterRef talks to the API server from a Pod.
	inclusterRef = "registry.invalid/node-harness/incluster:test"
)

var (
	c         *cluster.Cluster
	nodes     *node.Harness
	hello     node.Image
	incluster node.Image
	cs        kubernetes.Interface
	kit       *testkit.Kit
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	os.Exit(testkit.Exit(run(m)))
}

func run(m *testing.M) (int, error) {
	var err error
	if c, err = cluster.Start(cluster.Options{WithWorkloads: true, WithoutMetalLB: true}); err != nil {
		return 0, err
	}
	defer func() { _ = c.Stop() }()
	images, err := os.MkdirTemp("", "node-harness-images-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(images) }()
	pause, err := node.BuildImage(images, "./test/node/internal/pause", pauseRef)
	if err != nil {
		return 0, err
	}
	if hello, err = node.BuildImage(images, "./test/node/internal/hello", helloRef); err != nil {
		return 0, err
	}
	if incluster, err = node.BuildImage(images, "./test/node/internal/incluster", inclusterRef); err != nil {
		return 0, err
	}
	if nodes, err = node.StartTestNodes(context.Background(), c, pause); err != nil {
		return 0, err
	}
	defer func() {
		if err := nodes.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the nodes:", err)
		}
	}()
	if cs, err = kubernetes.NewForConfig(c.Config); err != nil {
		return 0, err
	}
	cl, err := client.New(c.Config, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return 0, err
	}
	kit = testkit.New(cl).Tidy(testkit.Tidying{Within: 2 * time.Minute})
	return m.Run(), nil
}

// TestNodeRunsAPod runs a Deployment of a locally built image, under the
// restricted security context the charts use, on a real node: the Pod
// passes its probes, answers a client beside the node on its Pod IP and
// through its Service's ClusterIP (kube-proxy's rules), and the API server
// reaches its kubelet for the Pod's log.
func TestNodeRunsAPod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	for _, n := range nodes.Nodes {
		t.Logf("Node %s started in %s", n.Name, n.StartTime.Round(time.Millisecond))
	}
	ns := helloNamespace(t)

	labels := map[string]string{"app": "hello"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: "node-a"},
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   new(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            "hello",
						Image:           helloRef,
						ImagePullPolicy: corev1.PullNever,
						Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
							PeriodSeconds: 1,
						},
						LivenessProbe: &corev1.Probe{
							ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: new(false),
							ReadOnlyRootFilesystem:   new(true),
							RunAsNonRoot:             new(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
				},
			},
		},
	}
	svc := serve(t, dep)

	var pod corev1.Pod
	g.Eventually(func(g Gomega) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=hello"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(HaveLen(1))
		pod = pods.Items[0]
		g.Expect(pod.Spec.NodeName).To(Equal("node-a"))
		g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
		ready := false
		for _, cond := range pod.Status.Conditions {
			ready = ready || cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue
		}
		g.Expect(ready).To(BeTrue(), "the Pod is not Ready: %+v", pod.Status)
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return nodeLogs() })
	g.Expect(nodes.Nodes[0].PodCIDR.Contains(netip.MustParseAddr(pod.Status.PodIP))).To(BeTrue(),
		"Pod IP %s outside the node's range %s", pod.Status.PodIP, nodes.Nodes[0].PodCIDR)

	want := "hello from " + pod.Name
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+pod.Status.PodIP+":8080/")
	}).WithTimeout(30*time.Second).Should(ContainSubstring(want), "the Pod answers on its IP")
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+svc.Spec.ClusterIP+"/")
	}).WithTimeout(time.Minute).Should(ContainSubstring(want), "the Pod answers on its Service's ClusterIP")

	// The Pod's log comes from its kubelet, through the API server.
	g.Eventually(func() (string, error) {
		b, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		return string(b), err
	}).WithTimeout(30 * time.Second).Should(ContainSubstring("Serving on :8080 as " + pod.Name))
}

// TestPodsAcrossNodes runs one Pod on each node: the client reaches each on
// its IP, through the node that holds its range, and the Service's
// ClusterIP, programmed on the first node, reaches both, the second across
// the segment.
func TestPodsAcrossNodes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := helloNamespace(t)
	labels := map[string]string{"app": "spread"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
							TopologyKey:   corev1.LabelHostname,
						}},
					}},
					Containers: []corev1.Container{{
						Name: "hello", Image: helloRef, ImagePullPolicy: corev1.PullNever,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					}},
				},
			},
		},
	}
	svc := serve(t, dep)

	var pods []corev1.Pod
	g.Eventually(func(g Gomega) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=spread"})
		g.Expect(err).NotTo(HaveOccurred())
		pods = list.Items
		g.Expect(pods).To(HaveLen(2))
		for _, p := range pods {
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(p.Status.PodIP).NotTo(BeEmpty())
		}
		g.Expect([]string{pods[0].Spec.NodeName, pods[1].Spec.NodeName}).To(ConsistOf("node-a", "node-b"))
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return nodeLogs() })

	for _, p := range pods {
		g.Expect(nodes.Node(p.Spec.NodeName).PodCIDR.Contains(netip.MustParseAddr(p.Status.PodIP))).To(BeTrue())
		g.Eventually(func() (string, error) {
			return nodes.Client.Get(ctx, "http://"+p.Status.PodIP+":8080/")
		}).WithTimeout(30*time.Second).Should(ContainSubstring("hello from "+p.Name), "Pod %s on %s", p.Name, p.Spec.NodeName)
	}
	answered := map[string]bool{}
	g.Eventually(func() int {
		if body, err := nodes.Client.Get(ctx, "http://"+svc.Spec.ClusterIP+"/"); err == nil {
			answered[strings.TrimSpace(strings.TrimPrefix(body, "hello from "))] = true
		}
		return len(answered)
	}).WithTimeout(time.Minute).WithPolling(50*time.Millisecond).Should(Equal(2), "both Pods answer on the ClusterIP")
}

// helloNamespace imports the hello image into every node and makes a
// namespace for the test that can run Pods: ServiceAccount admission wants
// the namespace's default account, which the ServiceAccount controller
// makes a moment after the namespace.
func helloNamespace(t *testing.T) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(nodes.ImportImage(ctx, hello.Archive)).To(Succeed())
	ns := kit.Namespace(t)
	g.Eventually(func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithTimeout(time.Minute).Should(Succeed())
	return ns
}

// serve creates the Deployment dep and a Service of the same name in
// front of its Pods, port 80 to their port named http, and returns the
// Service as the API server made it (with its ClusterIP).
func serve(t *testing.T, dep *appsv1.Deployment) *corev1.Service {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace},
		Spec: corev1.ServiceSpec{
			Selector: dep.Spec.Selector.MatchLabels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	_, err := cs.AppsV1().Deployments(dep.Namespace).Create(ctx, dep, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	svc, err = cs.CoreV1().Services(dep.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return svc
}

// nodeLogs is the tail of every node daemon's log, for a failure message.
func nodeLogs() string { return nodes.LogTails(30) }
