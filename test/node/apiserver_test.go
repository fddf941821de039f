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
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/address-controller/test/cluster"
)

// inclusterReport is what test/node/internal/incluster prints.
type inclusterReport struct {
	Host      string `json:"host"`
	CAFile    string `json:"caFile"`
	Version   string `json:"version"`
	User      string `json:"user"`
	ListNodes int32  `json:"listNodes"`
}

// TestPodsReachTheAPIServer runs, on each node, a Pod that talks to the API
// server as the managers do, with client-go's in-cluster configuration: it
// dials the `kubernetes` Service's ClusterIP (kube-proxy sends it to the
// address the API server advertises, which the node forwards), verifies
// the server against the cluster's CA (kube-root-ca.crt, in the Pod's
// ServiceAccount volume) and is authenticated by its ServiceAccount token,
// and is refused what its account may not do.
func TestPodsReachTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(nodes.ImportImage(ctx, incluster.Archive)).To(Succeed())
	ns := helloNamespace(t)

	// The Service's endpoint is the advertised address, on the API
	// server's port, on every node the same.
	kubernetesSvc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	slices, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=kubernetes",
	})
	g.Expect(err).NotTo(HaveOccurred())
	var endpoints []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			for _, p := range s.Ports {
				endpoints = append(endpoints, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port))))
			}
		}
	}
	api, err := url.Parse(c.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(endpoints).To(ConsistOf(net.JoinHostPort(cluster.AdvertiseAddress, api.Port())))

	server, err := cs.Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range nodes.Nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "incluster-" + n.Name, Namespace: ns},
			Spec: corev1.PodSpec{
				NodeSelector:  map[string]string{corev1.LabelHostname: n.Name},
				RestartPolicy: corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   new(true),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name: "incluster", Image: inclusterRef, ImagePullPolicy: corev1.PullNever,
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: new(false),
						ReadOnlyRootFilesystem:   new(true),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
			},
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	for _, n := range nodes.Nodes {
		name := "incluster-" + n.Name
		g.Eventually(func(g Gomega) {
			pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pod.Spec.NodeName).To(Equal(n.Name))
			g.Expect(pod.Status.Phase).NotTo(Equal(corev1.PodFailed), "the Pod failed: %s", podLog(ctx, ns, name))
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return nodeLogs() })

		var r inclusterReport
		g.Expect(json.Unmarshal([]byte(podLog(ctx, ns, name)), &r)).To(Succeed())
		t.Logf("From %s: %+v", n.Name, r)
		g.Expect(r.Host).To(Equal("https://"+net.JoinHostPort(kubernetesSvc.Spec.ClusterIP, "443")), "on %s", n.Name)
		g.Expect(r.CAFile).To(Equal("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"))
		g.Expect(r.Version).To(Equal(server.GitVersion))
		g.Expect(r.User).To(Equal("system:serviceaccount:" + ns + ":default"))
		g.Expect(r.ListNodes).To(BeNumerically("==", http.StatusForbidden))
	}
}

// podLog is the log of the Pod's only container, through the API server,
// or why there is none.
func podLog(ctx context.Context, ns, name string) string {
	b, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
