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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/node"
)

// lostNodeTolerations let a Pod stay 5 s on a node the control plane has
// lost (NotReady or unreachable) before it is evicted, where the API server
// gives every Pod 300 s (DefaultTolerationSeconds): the test's own
// workloads take them, and the charts as JSON (lostNodeTolerationsJSON).
func lostNodeTolerations() []corev1.Toleration {
	five := int64(5)
	return []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
	}
}

// lostNodeTolerationsJSON is lostNodeTolerations for helm --set-json: the
// charts' tolerations value and MetalLB's controller.tolerations.
func lostNodeTolerationsJSON() string {
	b, err := json.Marshal(lostNodeTolerations())
	if err != nil {
		panic(err)
	}
	return string(b)
}

// testNodeStopped installs the core's and the MetalLB driver's charts with
// two replicas each (one per node), walks the flagship flow up to the
// client's answer from Service A, and stops the node that announces A's
// address (every process of it killed at once, as a power cut would: the
// speaker that answered ARP for the address, kube-proxy, kubelet, and
// whichever manager replicas, MetalLB controller and workload Pods ran
// there). The control plane marks the node NotReady; its Pods are evicted
// and the Deployments run them again on the other node; the other node's
// speaker announces the address (its nodeAssigned event on the Service), and the client reaches A's Pod through it
// again. Then the rescheduled managers hand the address from A to B. A
// watch on the claim sees it Bound to its one address throughout, and the
// IPAddress is the same object.
//
// Artefacts: address-controller and metallb-iad as in
// testLeadersDeletedMidHandoff, with the value tolerations (deployment.yaml)
// set to lostNodeTolerations; MetalLB's chart's speaker DaemonSet (its
// memberlist tells the surviving speaker that the other one is gone) and
// controller.tolerations.
func testNodeStopped(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tolerate := "--set-json=tolerations=" + lostNodeTolerationsJSON()
	installManager(t, g, harness.Core, harness.CoreNamespace, coreImage, "replicas=2", tolerate)
	installManager(t, g, harness.Driver, harness.DriverNamespace, driverImage, "replicas=2", tolerate)
	f := claimAndServe(t, g)
	claim := kit.Claim(g, f.ns, "web")
	address := kit.Address(g, claim.Status.Addresses[0].Name)
	claims := watchClaims(g, f.ns)

	var lost string
	g.Eventually(func(g Gomega) {
		announcing := announcers(ctx, g, f.ns, "a")
		g.Expect(announcing).To(HaveLen(1), "no one node announces Service A")
		lost = announcing[0]
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	var other string
	for _, n := range nodes.Nodes {
		if n.Name != lost {
			other = n.Name
		}
	}
	g.Expect(other).NotTo(BeEmpty(), "no node besides %s", lost)
	t.Logf("Stopping %s, which announces %s; on it: %v", lost, f.address, podsOn(ctx, g, lost))

	g.Expect(nodes.Node(lost).Stop()).To(Succeed())
	stopped := time.Now()
	g.Eventually(func(g Gomega) {
		n, err := cs.CoreV1().Nodes().Get(ctx, lost, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(node.Ready(n)).To(BeFalse())
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "the control plane still counts %s Ready", lost)
	t.Logf("%s was NotReady %s after it stopped", lost, time.Since(stopped).Round(time.Millisecond))

	// The address moves to the other node's speaker, which says so on the
	// Service (its ServiceL2Status still names the lost node: MetalLB
	// v0.15.2 tries to rewrite the object's node, which is immutable), and
	// reaches A's Pod, which runs there (again, if it ran on the lost node).
	g.Eventually(func(g Gomega) {
		g.Expect(announcedSince(ctx, g, f.ns, "a", stopped)).To(ContainElement(other))
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	g.Eventually(func() (string, error) {
		return nodes.Client.Get(ctx, "http://"+f.address+"/")
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(HavePrefix("hello from a-"),
		func() string { return diagnose(ctx, cluster.MetalLBNamespace) })
	t.Logf("The client reached Service A through %s's speaker %s after %s stopped", other, time.Since(stopped).Round(time.Millisecond), lost)

	// Every Deployment's Pods run on the other node, each Deployment
	// Available with all its replicas.
	for _, d := range []struct{ namespace, name string }{
		{harness.CoreNamespace, string(harness.Core)}, {harness.DriverNamespace, string(harness.Driver)},
		{cluster.MetalLBNamespace, "metallb-controller"}, {f.ns, "a"}, {f.ns, "b"},
	} {
		g.Eventually(func(g Gomega) {
			dep, err := cs.AppsV1().Deployments(d.namespace).Get(ctx, d.name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(available(dep)).To(BeTrue(), "the Deployment is not Available: %+v", dep.Status)
			pods, err := cs.CoreV1().Pods(d.namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(dep.Spec.Selector)})
			g.Expect(err).NotTo(HaveOccurred())
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil {
					g.Expect(p.Spec.NodeName).To(Equal(other), "Pod %s", p.Name)
				}
			}
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "%s/%s: %s", d.namespace, d.name, func() string { return diagnose(ctx, d.namespace) })
	}
	t.Logf("Every Deployment ran on %s %s after %s stopped", other, time.Since(stopped).Round(time.Millisecond), lost)

	// The managers, running again, still hand the address over.
	g.Expect(cs.CoreV1().Services(f.ns).Delete(ctx, "a", metav1.DeleteOptions{})).To(Succeed())
	createB(g, f)
	reachB(t, g, f)
	claims().kept(g, map[string]string{"web": f.address})
	g.Expect(kit.Address(g, address.Name).UID).To(Equal(address.UID), "the IPAddress was made again")
	g.Expect(kit.StateOfAddress(g, address.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))

	// The lost node's Pods, evicted, wait for a kubelet that will not come
	// back. Marking the node out of service, as an administrator does once
	// a node is known lost, lets the control plane delete them, and the
	// test's namespaces with them.
	patch := fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"value":"nodeshutdown","effect":%q}]}}`,
		corev1.TaintNodeOutOfService, corev1.TaintEffectNoExecute)
	_, err := cs.CoreV1().Nodes().Patch(ctx, lost, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	g.Expect(err).NotTo(HaveOccurred())
}

// announcers are the nodes whose MetalLB speakers report, in their
// ServiceL2Status objects, that they announce Service ns/name.
func announcers(ctx context.Context, g Gomega, ns, name string) []string {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "metallb.io", Version: "v1beta1", Kind: "ServiceL2StatusList"})
	g.Expect(watcher.List(ctx, &list, client.InNamespace(cluster.MetalLBNamespace))).To(Succeed())
	var on []string
	for _, s := range list.Items {
		svcNS, _, _ := unstructured.NestedString(s.Object, "status", "serviceNamespace")
		svc, _, _ := unstructured.NestedString(s.Object, "status", "serviceName")
		at, _, _ := unstructured.NestedString(s.Object, "status", "node")
		if svcNS == ns && svc == name && at != "" && !slices.Contains(on, at) {
			on = append(on, at)
		}
	}
	slices.Sort(on)
	return on
}

// announcedSince are the nodes whose MetalLB speakers said, since, that
// they announce Service ns/name (the speaker's nodeAssigned event,
// "announcing from node <node> ...").
func announcedSince(ctx context.Context, g Gomega, ns, name string, since time.Time) []string {
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name + ",reason=nodeAssigned",
	})
	g.Expect(err).NotTo(HaveOccurred())
	var on []string
	for _, e := range events.Items {
		if e.LastTimestamp.Time.Before(since.Truncate(time.Second)) {
			continue
		}
		for _, n := range nodes.Nodes {
			if strings.Contains(e.Message, fmt.Sprintf("node %q", n.Name)) && !slices.Contains(on, n.Name) {
				on = append(on, n.Name)
			}
		}
	}
	return on
}

// podsOn names the Pods that run on the node called nodeName, for the log.
func podsOn(ctx context.Context, g Gomega, nodeName string) []string {
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + nodeName})
	g.Expect(err).NotTo(HaveOccurred())
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return names
}
