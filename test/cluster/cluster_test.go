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

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

var poolGVR = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}

// TestClusterSmoke checks each part of the control plane does its job: MetalLB
// allocates only to Services that name its pool, the garbage collector
// deletes dependents, and the namespace controller finishes deletions.
func TestClusterSmoke(t *testing.T) {
	g := NewWithT(t)
	c, err := Start(Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(c.Stop()).To(Succeed()) })
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dyn := dynamic.NewForConfigOrDie(c.Config)

	ns := "smoke"
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1",
		"kind":       "IPAddressPool",
		"metadata":   map[string]any{"name": "smoke", "namespace": MetalLBNamespace},
		"spec": map[string]any{
			"addresses":     []any{"198.51.100.0/30"},
			"autoAssign":    false,
			"avoidBuggyIPs": true,
		},
	}}
	_, err = dyn.Resource(poolGVR).Namespace(MetalLBNamespace).Create(ctx, pool, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	t.Run("MetalLB assigns from a pool only to a Service that selects it", func(t *testing.T) {
		g := NewWithT(t)
		selecting := loadBalancer(ns, "selecting", map[string]string{"metallb.io/address-pool": "smoke"})
		plain := loadBalancer(ns, "plain", nil)
		for _, s := range []*corev1.Service{selecting, plain} {
			_, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Eventually(func() []corev1.LoadBalancerIngress {
			s, err := cs.CoreV1().Services(ns).Get(ctx, "selecting", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			return s.Status.LoadBalancer.Ingress
		}, 30*time.Second, 200*time.Millisecond).Should(ConsistOf(HaveField("IP", BeElementOf("198.51.100.1", "198.51.100.2"))))
		g.Consistently(func() []corev1.LoadBalancerIngress {
			s, err := cs.CoreV1().Services(ns).Get(ctx, "plain", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			return s.Status.LoadBalancer.Ingress
		}, 3*time.Second, 200*time.Millisecond).Should(BeEmpty())
	})

	t.Run("the garbage collector deletes an owned object with its owner", func(t *testing.T) {
		g := NewWithT(t)
		owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "owned",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: new(true),
			}},
		}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{})).To(Succeed())
		g.Eventually(func() bool {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "owned", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, 60*time.Second, 200*time.Millisecond).Should(BeTrue())
	})

	t.Run("a deleted namespace goes away", func(t *testing.T) {
		g := NewWithT(t)
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cs.CoreV1().ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content"}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{})).To(Succeed())
		g.Eventually(func() bool {
			_, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, 60*time.Second, 200*time.Millisecond).Should(BeTrue())
	})

	t.Run("the pinned kubectl talks to the cluster with real version strings", func(t *testing.T) {
		g := NewWithT(t)
		out, err := c.Kubectl(ctx, "version", "-o", "json").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		g.Expect(string(out)).To(ContainSubstring(`"gitVersion": "v1.`))
		g.Expect(string(out)).NotTo(ContainSubstring("v0.0.0"))
	})

	t.Run("a kubeconfig impersonating a user acts as that user", func(t *testing.T) {
		g := NewWithT(t)
		path, err := c.KubeconfigFor("system:serviceaccount:smoke:nobody")
		g.Expect(err).NotTo(HaveOccurred())
		cmd := c.Kubectl(ctx, "--kubeconfig", path, "get", "configmaps", "-n", ns)
		out, err := cmd.CombinedOutput()
		g.Expect(err).To(HaveOccurred())
		g.Expect(string(out)).To(ContainSubstring(`"system:serviceaccount:smoke:nobody" cannot list resource "configmaps"`))
	})
}

// envKillChild makes this test binary act as a child that starts a cluster,
// prints the folder, and waits to be killed.
const envKillChild = "CLUSTER_TEST_KILL_CHILD"

// TestNoProcessOutlivesAKilledTest kills a process that runs a cluster, with
// SIGKILL, and checks that nothing the cluster started survives it: no
// process, not its folder, and (as root) no network namespace it watched.
func TestNoProcessOutlivesAKilledTest(t *testing.T) {
	if os.Getenv(envKillChild) == "1" {
		c, err := Start(Options{})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		// As root, a network namespace too (the wire test bed's kind).
		netns := "-"
		if os.Getuid() == 0 {
			netns = "wdtest-" + strconv.Itoa(os.Getpid())
			c.WatchNetns(netns)
			if out, err := exec.Command("ip", "netns", "add", netns).CombinedOutput(); err != nil {
				fmt.Println("ERROR", err, string(out))
				os.Exit(1)
			}
		}
		fmt.Println("DIR", c.Dir, netns)
		time.Sleep(10 * time.Minute)
		return
	}
	g := NewWithT(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoProcessOutlivesAKilledTest$")
	cmd.Env = append(os.Environ(), envKillChild+"=1")
	out, err := cmd.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmd.Start()).To(Succeed())
	buf := make([]byte, 4096)
	var line string
	for !strings.Contains(line, "\n") {
		n, err := out.Read(buf)
		g.Expect(err).NotTo(HaveOccurred(), "child output so far: %q", line)
		line += string(buf[:n])
	}
	g.Expect(line).To(HavePrefix("DIR "))
	fields := strings.Fields(strings.SplitN(line, "\n", 2)[0])
	g.Expect(fields).To(HaveLen(3), "DIR <folder> <network namespace or ->")
	dir, netns := fields[1], fields[2]
	descendants := descendantsOf(cmd.Process.Pid)
	g.Expect(len(descendants)).To(BeNumerically(">=", 4), "etcd, kube-apiserver, kube-controller-manager and MetalLB run")

	g.Expect(cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
	_ = cmd.Wait()
	g.Eventually(func() []int {
		var alive []int
		for _, pid := range descendants {
			if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
				alive = append(alive, pid)
			}
		}
		return alive
	}, 30*time.Second, 200*time.Millisecond).Should(BeEmpty())
	g.Eventually(func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the cluster folder %s is removed", dir)
	if netns != "-" {
		g.Eventually(func() bool {
			_, err := os.Stat(filepath.Join("/run/netns", netns))
			return os.IsNotExist(err)
		}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the network namespace %s is deleted", netns)
	}
}

// descendantsOf lists the processes below pid.
func descendantsOf(root int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent[pid], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func loadBalancer(ns, name string, annotations map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			Ports:                         []corev1.ServicePort{{Port: 80}},
		},
	}
}

var _ = context.Background

// With CLUSTER_AUDIT=1 the API server logs every write, with its body and
// its writer, in the cluster's folder; reads and events are left out.
func TestAuditRecordsEachWriteWithItsBody(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("CLUSTER_AUDIT", "1")
	c, err := Start(Options{WithoutControllerManager: true, WithoutMetalLB: true})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(c.Stop()).To(Succeed()) })
	cs := kubernetes.NewForConfigOrDie(c.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited", Namespace: "default"},
		Data: map[string]string{"written": "by-the-audit-test"}}
	_, err = cs.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().ConfigMaps("default").Get(t.Context(), "audited", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	entries := func() []map[string]any {
		raw, _ := os.ReadFile(filepath.Join(c.Dir, "audit.log"))
		var out []map[string]any
		for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && strings.Contains(line, `"audited"`) {
				out = append(out, e)
			}
		}
		return out
	}
	g.Eventually(entries, 10*time.Second, 100*time.Millisecond).Should(ConsistOf(And(
		HaveKeyWithValue("verb", "create"),
		HaveKeyWithValue("requestObject", HaveKeyWithValue("data", HaveKeyWithValue("written", "by-the-audit-test"))),
	)), "the create, with its body; not the get")
}
