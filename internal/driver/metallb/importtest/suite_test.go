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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/importer"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// backend is the MetalLB backend as `metallb-iad import` runs it.
var backend = metallb.ForImport(metallb.Options{MetalLBNamespace: cluster.MetalLBNamespace})

// ingress is what svc's load balancer reports, as the import reads it.
func ingress(svc *corev1.Service) string {
	ips := importer.IngressOf(svc)
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return strings.Join(out, ",")
}

// The tests share metallbtest's control plane, with the real MetalLB
// controller, and its tidying: each test starts its own core and driver
// (begin) before it makes anything, so that they still run when the kit
// removes what the test made; the package fails if anything is left
// afterwards.
func TestMain(m *testing.M) { os.Exit(mt.Main(m, mt.Options{})) }

const (
	placeholderNS = mt.PlaceholderNS
	timeout       = 60 * time.Second
	tick          = 100 * time.Millisecond
)

var (
	watchOnce sync.Once
	watchErr  error
	// k8s is the admin's client, able to watch; kit is metallbtest's.
	k8s client.WithWatch
	kit *testkit.Kit
)

// begin hands the test the package's clients and starts its own core and
// driver, before the test makes anything (see TestMain); it returns the
// test's Gomega.
func begin(t *testing.T) *WithT {
	t.Helper()
	watchOnce.Do(func() {
		k8s, watchErr = client.NewWithWatch(mt.Cluster.Config, client.Options{Scheme: manager.NewScheme()})
		kit = mt.Kit
	})
	if watchErr != nil {
		t.Fatal(watchErr)
	}
	g := NewWithT(t)
	mt.StartBoth(t)
	return g
}

// legacyPool makes the admin's own pool: auto-assigned, to the namespaces
// given, and named after the first, so that no other test's pool has its
// name; it goes when the test ends. It returns the pool's name.
func legacyPool(t *testing.T, g Gomega, addresses []string, namespaces ...string) string {
	name := "legacy-" + suffix(namespaces[0])
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	pool.SetNamespace(cluster.MetalLBNamespace)
	pool.SetName(name)
	pool.Object["spec"] = map[string]any{
		"addresses":         toAny(addresses),
		"autoAssign":        true,
		"serviceAllocation": map[string]any{"namespaces": toAny(namespaces)},
	}
	kit.Make(t, g, pool)
	return name
}

// blockedClass makes a MetalLB class over ranges (with opts) and waits
// until it says that the admin's pool over the same addresses keeps it
// from rendering: the state every import here starts from.
func blockedClass(t *testing.T, g Gomega, name string, ranges []string, opts ...b.ClassOption) {
	addresses, err := json.Marshal(ranges)
	g.Expect(err).NotTo(HaveOccurred())
	opts = append([]b.ClassOption{b.Parameters(`{"addresses": ` + string(addresses) + `}`)}, opts...)
	kit.Make(t, g, b.Class(name, v1alpha1.ProvisionerMetalLB, opts...))
	g.Eventually(renderedReason(g, name), timeout, tick).Should(Equal("OverlapsOtherPool"))
}

// suffix is the random end of a namespace the kit made: it keeps the names
// of what a test makes outside its namespaces apart from other tests'.
func suffix(ns string) string { return ns[len(ns)-4:] }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func poolAddresses(g Gomega, name string) func() []string {
	return func() []string {
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(params.IPAddressPoolGVK)
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: cluster.MetalLBNamespace, Name: name}, pool); err != nil {
			return nil
		}
		out, _, err := unstructured.NestedStringSlice(pool.Object, "spec", "addresses")
		g.Expect(err).NotTo(HaveOccurred())
		return out
	}
}

func renderedReason(g Gomega, class string) func() string {
	return func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionRendered)
	}
}

func lbIngress(ns, name string) func() string {
	return func() string {
		svc := &corev1.Service{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			return "error: " + err.Error()
		}
		return ingress(svc)
	}
}

// holders lists "namespace/name" of every Service whose load balancer
// reports ip.
func holders(g Gomega, ip string) func() []string { return kit.Holders(g, ip) }

// metallbEvents returns, per Service key, when MetalLB last emitted an event
// of reason about it (to the second, as events record it). Aggregated
// repeats move that time; when the event object is written does not.
func serviceEvents(g Gomega, reason string) map[string]time.Time {
	list := &corev1.EventList{}
	g.Expect(k8s.List(context.Background(), list)).To(Succeed())
	out := map[string]time.Time{}
	for _, e := range list.Items {
		if e.Reason != reason || e.InvolvedObject.Kind != "Service" {
			continue
		}
		at := e.LastTimestamp.Time
		if e.Series != nil {
			at = e.Series.LastObservedTime.Time
		}
		if at.IsZero() {
			at = e.EventTime.Time
		}
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		if at.After(out[key]) {
			out[key] = at
		}
	}
	return out
}

// settle lets MetalLB finish with Services the test has just created, and
// returns the second from which any MetalLB event about them is one the
// test's next steps caused (events record the second). Under load, MetalLB's
// cache lags seconds behind its own writes, and a full pass over every
// Service (which MetalLB runs after any deletion) then handles a brand-new
// Service from a copy without its address: it assigns the same address
// again and says IPAllocated. An admin's Services are older than that; the
// test's are not, so it runs such a pass itself (creating and deleting a
// Service in ns) and waits until MetalLB has been quiet for three seconds.
func settle(g Gomega, ns string) time.Time {
	probe := &corev1.Service{}
	probe.Namespace, probe.Name = ns, "settle"
	probe.Spec.Type = corev1.ServiceTypeLoadBalancer
	probe.Spec.Ports = []corev1.ServicePort{{Port: 80}}
	g.Expect(k8s.Create(context.Background(), probe)).To(Succeed())
	g.Eventually(lbIngress(ns, "settle"), timeout, tick).ShouldNot(BeEmpty())
	g.Expect(k8s.Delete(context.Background(), probe)).To(Succeed())
	g.Eventually(func() bool {
		before := serviceEvents(g, "IPAllocated")
		time.Sleep(3 * time.Second)
		return maps.Equal(before, serviceEvents(g, "IPAllocated"))
	}, timeout, tick).Should(BeTrue())
	time.Sleep(1100 * time.Millisecond)
	return time.Now().Truncate(time.Second)
}

// eventsOf describes every event about the Service key, for failures.
func eventsOf(g Gomega, key string) []string {
	list := &corev1.EventList{}
	g.Expect(k8s.List(context.Background(), list)).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Service" && e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name == key {
			out = append(out, fmt.Sprintf("%s %s x%d %s: %s", e.LastTimestamp.Format(time.RFC3339), e.Source.Component, e.Count, e.Reason, e.Message))
		}
	}
	return out
}

// ingressWatch records every change of the load balancer addresses of the
// watched Services away from what they had when it started.
type ingressWatch struct {
	mu         sync.Mutex
	want       map[string]string
	violations []string
	stop       func()
}

func watchIngress(t *testing.T, g Gomega, want map[string]string) *ingressWatch {
	w := &ingressWatch{want: want}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.stop = func() { cancel(); <-done }
	watcher, err := k8s.Watch(ctx, &corev1.ServiceList{})
	g.Expect(err).NotTo(HaveOccurred())
	go func() {
		defer close(done)
		defer watcher.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-watcher.ResultChan():
				if !ok {
					w.mu.Lock()
					w.violations = append(w.violations, "the watch ended early")
					w.mu.Unlock()
					return
				}
				svc, isSvc := ev.Object.(*corev1.Service)
				if !isSvc {
					continue
				}
				key := svc.Namespace + "/" + svc.Name
				w.mu.Lock()
				if want, watched := w.want[key]; watched {
					got := ingress(svc)
					if ev.Type == watch.Deleted || got != want {
						w.violations = append(w.violations, fmt.Sprintf("%s %s: %q, had %q", ev.Type, key, got, want))
					}
				}
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.stop)
	return w
}

func (w *ingressWatch) Violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.violations)
}
