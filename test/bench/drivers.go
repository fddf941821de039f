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

package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
)

// backend is everything the benchmark knows of one driver and of the
// load balancer allocator behind it; the scenarios, the anchors and the
// report are the same for every driver.
type backend struct {
	// name is the -driver value and the report's driver. It also keys the
	// allocator's process in a Result, and names the driver's path ("b-" +
	// name), its namespaces and classes ("bench-" + name + "-N"), and the
	// allocator's anchors (name + "-alone", name + "-pinned").
	name string
	// title names the allocator in the report's text ("MetalLB").
	title string
	// cmd is the driver's package under the repository root; its process
	// is named after the package.
	cmd string
	// provisioner is the driver's name, which its classes carry.
	provisioner string
	// placeholderNamespace holds the driver's placeholder Services.
	placeholderNamespace string
	// pin is the annotation with which the driver pins a Service to its
	// claim's address.
	pin string
	// args are the driver's own flags, beside the placeholder namespace and
	// those every driver has.
	args []string
	// cluster makes the cluster run this allocator, and no other.
	cluster func(*cluster.Options)
	// pid is the allocator's process, 0 when it is not running; metrics is
	// its controller-runtime metrics, "" for none.
	pid     func(*cluster.Cluster) int
	metrics func(*cluster.Cluster) string
	// wire says whether the wire scenario can run: it announces addresses
	// with MetalLB's speaker.
	wire bool
	// pools are the allocator's own pools, which the anchors use without
	// the product.
	pools anchorPools
}

// anchorPools is how the anchors draw addresses from the allocator itself.
type anchorPools interface {
	// create makes the pool name over prefix, serving only the Services
	// service(name, …) makes (those of namespace name, say), and waits
	// until the allocator knows it.
	create(ctx context.Context, e *env, name string, prefix netip.Prefix, pinnedOnly bool) error
	// remove deletes the pool name.
	remove(ctx context.Context, e *env, name string) error
	// service returns the options that make a Service draw from the pool
	// name, pinned by hand to ip unless ip is "".
	service(pool, ip string) []b.ServiceOption
}

// The drivers the benchmark measures.
var (
	metallbBackend = &backend{
		name: "metallb", title: "MetalLB", cmd: "./cmd/metallb-iad",
		provisioner:          v1alpha1.ProvisionerMetalLB,
		placeholderNamespace: "metallb-iad-system",
		pin:                  "metallb.io/loadBalancerIPs",
		args:                 []string{"--metallb-namespace", cluster.MetalLBNamespace},
		cluster:              func(*cluster.Options) {},
		pid:                  (*cluster.Cluster).MetalLBPID,
		metrics:              (*cluster.Cluster).MetalLBMetricsURL,
		wire:                 true,
		pools:                metallbPools{},
	}
	ciliumBackend = &backend{
		name: "cilium", title: "Cilium", cmd: "./cmd/cilium-iad",
		provisioner:          v1alpha1.ProvisionerCilium,
		placeholderNamespace: "cilium-iad-system",
		pin:                  ciliumPin,
		// MetalLB would answer the same Services as Cilium.
		cluster: func(o *cluster.Options) { o.WithoutMetalLB, o.WithCilium = true, true },
		pid:     (*cluster.Cluster).CiliumPID,
		// The cluster runs the operator with its metrics off.
		metrics: func(*cluster.Cluster) string { return "" },
		pools:   ciliumPools{},
	}
	// backends are the drivers by -driver.
	backends = map[string]*backend{metallbBackend.name: metallbBackend, ciliumBackend.name: ciliumBackend}
)

// defaultDriver is the driver measured when -driver is not given.
const defaultDriver = "metallb"

// backendNamed returns the driver called name, the default one for "".
func backendNamed(name string) (*backend, error) {
	if name == "" {
		name = defaultDriver
	}
	d, ok := backends[name]
	if !ok {
		return nil, fmt.Errorf("unknown driver %q (want one of %s)", name, strings.Join(driverNames(), ", "))
	}
	return d, nil
}

// driverNames lists the drivers' names, sorted.
func driverNames() []string {
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// scenario is the name of the driver's path (b).
func (d *backend) scenario() string { return "b-" + d.name }

// anchorAlone and anchorPinned name the allocator's anchors.
func (d *backend) anchorAlone() string  { return d.name + "-alone" }
func (d *backend) anchorPinned() string { return d.name + "-pinned" }

// metallbPools are MetalLB IPAddressPools in MetalLB's namespace.
type metallbPools struct{}

// create makes a pool usable only by Services of namespace name, and waits
// until MetalLB reports it: a Service created before MetalLB knows its pool
// fails and is not retried (E3 in docs/performance.md). Like the product's
// benchmark class it leaves avoidBuggyIPs off, which would refuse every pin
// ending in .0 or .255. A pool for pinned Services alone does not assign
// addresses by itself (autoAssign off).
func (metallbPools) create(ctx context.Context, e *env, name string, prefix netip.Prefix, pinnedOnly bool) error {
	pool := object(params.IPAddressPoolGVK, cluster.MetalLBNamespace, name)
	pool.Object["spec"] = map[string]any{
		"addresses":         []any{prefix.String()},
		"autoAssign":        !pinnedOnly,
		"avoidBuggyIPs":     false,
		"serviceAllocation": map[string]any{"namespaces": []any{name}},
	}
	if err := e.c.Create(ctx, pool); err != nil {
		return err
	}
	return waitPool(ctx, e, pool, "MetalLB", func(got *unstructured.Unstructured) bool {
		free, _, _ := unstructured.NestedInt64(got.Object, "status", "availableIPv4")
		return free > 0
	})
}

func (metallbPools) remove(ctx context.Context, e *env, name string) error {
	return client.IgnoreNotFound(e.c.Delete(ctx, object(params.IPAddressPoolGVK, cluster.MetalLBNamespace, name)))
}

// service: the pool serves the namespace; a pin is MetalLB's annotation.
func (metallbPools) service(_, ip string) []b.ServiceOption {
	if ip == "" {
		return nil
	}
	return []b.ServiceOption{b.PinnedByHand(ip)}
}

// ciliumPools are CiliumLoadBalancerIPPools (cluster-scoped), each
// selecting the Services that carry its name in labelAnchorPool.
type ciliumPools struct{}

var gvkCiliumPool = schema.GroupVersionKind{Group: "cilium.io", Version: "v2", Kind: "CiliumLoadBalancerIPPool"}

// ciliumPin is Cilium's LB-IPAM pin.
const ciliumPin = "lbipam.cilium.io/ips"

// labelAnchorPool, on an anchor's Service, names the Cilium pool that
// serves it.
const labelAnchorPool = "bench.local.sdn.cozystack.io/pool"

// create makes a pool selecting the Services labelled with its name, and
// waits until LB-IPAM has read it (it reports the pool's size, as the
// message of a condition whose status is always Unknown). A pool for
// pinned Services alone is the same pool: LB-IPAM has no autoAssign.
func (ciliumPools) create(ctx context.Context, e *env, name string, prefix netip.Prefix, _ bool) error {
	pool := object(gvkCiliumPool, "", name)
	pool.Object["spec"] = map[string]any{
		"blocks":          []any{map[string]any{"cidr": prefix.String()}},
		"serviceSelector": map[string]any{"matchLabels": map[string]any{labelAnchorPool: name}},
	}
	if err := e.c.Create(ctx, pool); err != nil {
		return err
	}
	return waitPool(ctx, e, pool, "Cilium's LB-IPAM", func(got *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		return slices.ContainsFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["type"] == "cilium.io/IPsTotal" && m["message"] != "" && m["message"] != "0"
		})
	})
}

func (ciliumPools) remove(ctx context.Context, e *env, name string) error {
	return client.IgnoreNotFound(e.c.Delete(ctx, object(gvkCiliumPool, "", name)))
}

// service: the pool's label, and a pin with Cilium's annotation.
func (ciliumPools) service(pool, ip string) []b.ServiceOption {
	opts := []b.ServiceOption{b.WithLabel(labelAnchorPool, pool)}
	if ip != "" {
		opts = append(opts, func(s *corev1.Service) { metav1.SetMetaDataAnnotation(&s.ObjectMeta, ciliumPin, ip) })
	}
	return opts
}

// waitPool waits, 30 s at most, until ready says who (the allocator) knows
// pool.
func waitPool(ctx context.Context, e *env, pool *unstructured.Unstructured, who string,
	ready func(*unstructured.Unstructured) bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got := object(pool.GroupVersionKind(), pool.GetNamespace(), pool.GetName())
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
			return err
		}
		if ready(got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not report pool %s within 30 s", who, pool.GetName())
}
