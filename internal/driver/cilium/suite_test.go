//go:build cilium

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

package cilium_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// Cilium's names, as the operator v1.20.2 reads and writes them.
const (
	annotationIPs        = "lbipam.cilium.io/ips"
	annotationSharingKey = "lbipam.cilium.io/sharing-key"
	// conditionSatisfied is the Service condition LB-IPAM sets.
	conditionSatisfied = "cilium.io/IPAMRequestSatisfied"
	// conditionPoolTotal is a pool condition LB-IPAM sets once it has
	// read the pool.
	conditionPoolTotal = "cilium.io/IPsTotal"
	// labelPool is the label our pools select Services by.
	labelPool = "test.cilium.local/pool"
)

var poolGVK = schema.GroupVersionKind{Group: "cilium.io", Version: "v2", Kind: "CiliumLoadBalancerIPPool"}

const (
	timeout = 30 * time.Second
	tick    = 100 * time.Millisecond
	// settle is how long a test watches for something that must not
	// happen (an address given, an event recorded).
	settle = 3 * time.Second
)

var (
	testCluster *cluster.Cluster
	k8s         client.Client
	kit         *testkit.Kit
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		assets, err := cluster.FindAssets()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if assets.CiliumOperator() == "" {
			fmt.Fprintln(os.Stderr, "no Cilium operator built: run `make test-cilium`, which builds it")
			return 1
		}
		// MetalLB would answer the same class-less Services as Cilium.
		return testkit.Main(cluster.Options{WithoutMetalLB: true, WithCilium: true}, func(c *cluster.Cluster, k client.Client) (int, error) {
			testCluster, k8s = c, k
			kit = testkit.New(k8s).Tidy(testkit.Tidying{Within: timeout, Leftovers: contractHarness{}.Leftovers})
			code := m.Run()
			if code != 0 {
				fmt.Fprintln(os.Stderr, "--- cilium-operator log (tail) ---")
				fmt.Fprintln(os.Stderr, tail(testCluster.CiliumLog(), 60))
			}
			return code, nil
		})
	}())
}

func tail(s string, lines int) string {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			if n++; n > lines {
				return s[i+1:]
			}
		}
	}
	return s
}

var nextRange atomic.Int32

// poolOption sets a field of a pool's spec under construction.
type poolOption func(spec map[string]any)

// allowFirstLastIPs sets the pool's allowFirstLastIPs ("Yes" or "No").
func allowFirstLastIPs(v string) poolOption {
	return func(spec map[string]any) { spec["allowFirstLastIPs"] = v }
}

// freshPool creates a pool over an IPv4 /28 no other test uses, selecting
// Services labelled labelPool=<its name>, waits until LB-IPAM has read it,
// and returns its name and range. Every pool selects: a pool without a
// selector would serve every test's Services.
func freshPool(t *testing.T, g Gomega, opts ...poolOption) (name string, cidr netip.Prefix) {
	name = testkit.Name(t)
	n := nextRange.Add(1)
	cidr = netip.MustParsePrefix(fmt.Sprintf("198.18.%d.0/28", n%256))
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(poolGVK)
	pool.SetName(name)
	g.Expect(unstructured.SetNestedSlice(pool.Object, []any{map[string]any{"cidr": cidr.String()}}, "spec", "blocks")).To(Succeed())
	g.Expect(unstructured.SetNestedStringMap(pool.Object, map[string]string{labelPool: name},
		"spec", "serviceSelector", "matchLabels")).To(Succeed())
	spec, _, _ := unstructured.NestedMap(pool.Object, "spec")
	for _, o := range opts {
		o(spec)
	}
	g.Expect(unstructured.SetNestedMap(pool.Object, spec, "spec")).To(Succeed())
	kit.Make(t, g, pool)
	g.Eventually(func() []metav1.Condition { return poolConditions(g, name) }, timeout, tick).
		Should(ContainElement(HaveField("Type", conditionPoolTotal)))
	return name, cidr
}

// onFreshPool opens a test that pins Services to an address: it returns the
// test's Gomega and namespace, and a pool of its own (freshPool) with the
// pool's n-th address, which no other test's Service can hold.
func onFreshPool(t *testing.T, n int) (g *WithT, ns, pool, ip string) {
	g = NewWithT(t)
	ns = kit.Namespace(t)
	pool, cidr := freshPool(t, g)
	return g, ns, pool, nthAddress(cidr, n)
}

func poolConditions(g Gomega, name string) []metav1.Condition {
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(poolGVK)
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, pool)).To(Succeed())
	raw, _, err := unstructured.NestedSlice(pool.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	out := make([]metav1.Condition, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		message, _ := m["message"].(string)
		out = append(out, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: message})
	}
	return out
}

// service returns a LoadBalancer Service selected by pool, on TCP port.
func service(ns, name, pool string, port int32, opts ...b.ServiceOption) *corev1.Service {
	opts = append([]b.ServiceOption{b.Port(port)}, opts...)
	if pool != "" {
		opts = append(opts, b.WithLabel(labelPool, pool))
	}
	return b.Service(ns, name, opts...)
}

// annotated sets one annotation on a Service under construction.
func annotated(key, value string) b.ServiceOption {
	return func(s *corev1.Service) { metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, value) }
}

// ingress lists the IPs a Service's load balancer status reports.
func ingress(g Gomega, ns, name string) func() []string {
	return func() []string {
		lb := kit.Service(g, ns, name).Status.LoadBalancer.Ingress
		out := make([]string, 0, len(lb))
		for _, in := range lb {
			out = append(out, in.IP)
		}
		return out
	}
}

// satisfied reads LB-IPAM's condition on a Service.
func satisfied(g Gomega, ns, name string) func() metav1.Condition {
	return func() metav1.Condition {
		c := testkit.Condition(kit.Service(g, ns, name).Status.Conditions, conditionSatisfied)
		// Only what a test asserts on: the time and generation vary.
		return metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
}

// eventsAbout lists "reason: note" of every event regarding obj, whoever
// recorded it except the API server's ClusterIP repair loop.
func eventsAbout(g Gomega, obj client.Object) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(context.Background(), list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() && e.ReportingController != testkit.APIServerRepair {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

// nthAddress is the n-th address of cidr (0 is the network address).
func nthAddress(cidr netip.Prefix, n int) string {
	a := cidr.Addr()
	for range n {
		a = a.Next()
	}
	return a.String()
}

func inPrefix(cidr netip.Prefix) func(string) bool {
	return func(ip string) bool { return cidr.Contains(netip.MustParseAddr(ip)) }
}
