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
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	b "github.com/cozystack/address-controller/test/builder"
)

// The anchors are what a user would run instead of the product, measured in
// the same run, on the same API server, with the same client and workers,
// while neither manager of the product runs:
//
//   - peer, peer-unthrottled: the Cluster API in-cluster IPAM provider
//     allocating N claims from one InClusterIPPool, beside the static path
//     (a), in two builds of the same release (peers below);
//   - <driver>-alone (metallb-alone, cilium-alone): N plain LoadBalancer
//     Services drawing from one pool of the driver's allocator, beside the
//     driver's path (b);
//   - <driver>-pinned: N LoadBalancer Services pinned by hand to given
//     addresses with the allocator's own annotation, beside association (c).
const (
	anchorPeer            = "peer"
	anchorPeerUnthrottled = "peer-unthrottled"
)

// anchorBeside names the product scenario (by letter) each anchor, of every
// driver, is set against; an anchor runs only when that scenario does.
var anchorBeside = func() map[string]string {
	m := map[string]string{anchorPeer: "a", anchorPeerUnthrottled: "a"}
	for _, d := range backends {
		m[d.anchorAlone()], m[d.anchorPinned()] = "b", "c"
	}
	return m
}()

// peerBuild is one build of the peer allocator: the release as its authors
// built it (controller-runtime v0.20, whose client sends at most 20
// requests/s), or the same source with controller-runtime v0.21 or later,
// whose client has no limit (make capi-ipam-unthrottled). Each runs only
// during its own anchor, watching only that anchor's namespace.
type peerBuild struct {
	// anchor names its scenario and its process.
	anchor string
	// assets is the folder holding its manager.
	assets string
}

// peerTitle names a build of the peer in the report, from its folder's
// name: "v1.0.3" for the release, "v1.0.3-controller-runtime-v0.21.0" for
// the release rebuilt with that controller-runtime.
func peerTitle(assets string) string {
	base := filepath.Base(assets)
	if release, cr, ok := strings.Cut(base, "-controller-runtime-"); ok {
		return fmt.Sprintf("peer %s + controller-runtime %s (unthrottled)", release, cr)
	}
	return fmt.Sprintf("peer %s (released, client limited to 20 req/s)", base)
}

// The kinds the peer creates, which the benchmark's scheme does not know.
var (
	gvkInClusterIPPool = schema.GroupVersionKind{Group: "ipam.cluster.x-k8s.io", Version: "v1alpha2", Kind: "InClusterIPPool"}
	gvkPeerClaim       = schema.GroupVersionKind{Group: "ipam.cluster.x-k8s.io", Version: "v1beta1", Kind: "IPAddressClaim"}
)

// object returns an empty unstructured object of kind gvk.
func object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// anchorRun is one size's anchors: their namespaces and ranges, each a /16
// of its own beside the product's classes (sizeRange).
type anchorRun struct {
	e                       *env
	n                       int
	aloneNS, pinnedNS       string
	aloneRange, pinnedRange netip.Prefix
	peerNS                  map[string]string
	peerRange               map[string]netip.Prefix
}

func newAnchorRun(e *env, i, n int) *anchorRun {
	return &anchorRun{
		e: e, n: n,
		peerNS: map[string]string{
			anchorPeer:            fmt.Sprintf("bench-peer-%d", n),
			anchorPeerUnthrottled: fmt.Sprintf("bench-peer-unthrottled-%d", n),
		},
		peerRange: map[string]netip.Prefix{
			anchorPeer:            sizeRange(i, rangePeer),
			anchorPeerUnthrottled: sizeRange(i, rangePeerUnthrottled),
		},
		aloneNS:     fmt.Sprintf("bench-alone-%d", n),
		pinnedNS:    fmt.Sprintf("bench-pinned-%d", n),
		aloneRange:  sizeRange(i, rangeAlone),
		pinnedRange: sizeRange(i, rangePinned),
	}
}

func (a *anchorRun) scenarios() []scenario {
	return []scenario{
		a.peerScenario(anchorPeer),
		a.peerScenario(anchorPeerUnthrottled),
		{name: a.e.backend.anchorAlone(), setup: a.setupAlone, body: a.alone},
		{name: a.e.backend.anchorPinned(), setup: a.setupPinned, body: a.pinned},
	}
}

// chosen are the anchors to run: those whose product scenario runs, each
// peer only when its binary was given.
func (e *env) chosenAnchors(a *anchorRun) []scenario {
	if !e.cfg.Anchors {
		return nil
	}
	var out []scenario
	for _, sc := range a.scenarios() {
		if len(e.cfg.Scenarios) > 0 && !slices.Contains(e.cfg.Scenarios, anchorBeside[sc.name]) {
			continue
		}
		if anchorBeside[sc.name] == "a" && e.peers[sc.name] == nil {
			continue
		}
		out = append(out, sc)
	}
	return out
}

// measureAnchors runs the chosen anchors of one size with both managers
// stopped, then removes the allocator's anchors' Services and pools and
// starts the managers again. The peer's claims stay, as the static path's do.
func (e *env) measureAnchors(ctx context.Context, i, n int) ([]Result, error) {
	a := newAnchorRun(e, i, n)
	chosen := e.chosenAnchors(a)
	if len(chosen) == 0 {
		return nil, nil
	}
	e.cfg.logf("N=%d: stopping both managers for the anchors", n)
	if err := e.stopManagers(); err != nil {
		return nil, err
	}
	var results []Result
	for _, sc := range chosen {
		e.cfg.logf("N=%d: anchor %s", n, sc.name)
		res := e.measure(ctx, sc, n, Ceiling{})
		e.cfg.logf("N=%d: %s converged=%v in %.1fs (%.1f/s, p50 %.0fms, p99 %.0fms, %.2f writes each)",
			n, sc.name, res.Converged, res.Seconds, res.PerSecond, res.P50Ms, res.P99Ms, res.WritesPerClaim)
		results = append(results, res)
		// A peer goes on reconciling after its last claim has an address;
		// it is stopped, so that nothing after pays for that.
		if p := e.peers[sc.name]; p != nil && p.proc != nil {
			if err := p.proc.Stop(); err != nil {
				e.cfg.logf("N=%d: stopping %s: %v", n, sc.name, err)
			}
		}
	}
	if err := a.cleanup(ctx); err != nil {
		e.cfg.logf("N=%d: cleaning up the anchors: %v", n, err)
	}
	e.cfg.logf("N=%d: starting both managers again", n)
	if err := e.startManagers(ctx, e.cfg.handoffs()[0]); err != nil {
		return results, err
	}
	if err := e.waitQuiet(ctx, 2*time.Minute, e.coreURL, e.driverURL); err != nil {
		if ctx.Err() != nil {
			return results, err
		}
		e.cfg.logf("N=%d: the managers: %v; measuring on", n, err)
	}
	return results, nil
}

// peerScenario is the anchor of one build of the peer.
func (a *anchorRun) peerScenario(name string) scenario {
	return scenario{
		name:    name,
		setup:   func(ctx context.Context) error { return a.setupPeer(ctx, name) },
		body:    func(ctx context.Context) (outcome, error) { return a.peer(ctx, name) },
		objects: func(ctx context.Context) ([]ObjectSize, error) { return a.peerObjects(ctx, name) },
	}
}

// setupPeer makes the peer's namespace and its pool, the whole /16, the
// gateway its first address, then starts that build of the peer, watching
// that namespace alone.
func (a *anchorRun) setupPeer(ctx context.Context, name string) error {
	ns, r := a.peerNS[name], a.peerRange[name]
	if a.n+3 > 1<<(32-r.Bits()) {
		return fmt.Errorf("%d addresses do not fit %s", a.n, r)
	}
	if err := a.e.namespace(ctx, ns); err != nil {
		return err
	}
	pool := object(gvkInClusterIPPool, ns, "pool")
	pool.Object["spec"] = map[string]any{
		"addresses": []any{r.String()},
		"prefix":    int64(r.Bits()),
		"gateway":   nthAddress(r, 0).String(),
	}
	if err := a.e.c.Create(ctx, pool); err != nil {
		return err
	}
	return a.e.startPeer(ctx, name, ns)
}

// peer: N claims of the Cluster API's IPAM against one InClusterIPPool,
// done when every claim names its IPAddress (status.addressRef), which the
// provider writes once the address exists.
func (a *anchorRun) peer(ctx context.Context, name string) (outcome, error) {
	ns := a.peerNS[name]
	p := newProgress()
	inf, err := a.e.cache.GetInformer(ctx, object(gvkPeerClaim, "", ""))
	if err != nil {
		return outcome{}, err
	}
	defer func() { _ = a.e.cache.RemoveInformer(context.Background(), object(gvkPeerClaim, "", "")) }()
	observe := func(obj any) {
		at := time.Now()
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetNamespace() != ns {
			return
		}
		if ref, _, _ := unstructured.NestedString(u.Object, "status", "addressRef", "name"); ref != "" {
			p.stamp("allocated", u.GetName(), at)
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) },
	})
	if err != nil {
		return outcome{}, err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	err = a.e.createEach(ctx, a.n, p, func(i int) client.Object {
		c := object(gvkPeerClaim, ns, claimName(i))
		c.Object["spec"] = map[string]any{
			"poolRef": map[string]any{"apiGroup": gvkInClusterIPPool.Group, "kind": gvkInClusterIPPool.Kind, "name": "pool"},
		}
		return c
	})
	if err != nil {
		return outcome{}, err
	}
	return p.settle(ctx, "created", "allocated", func() bool { return p.stamped("allocated") == a.n }, func() string {
		return fmt.Sprintf("%d of %d claims have an address", p.stamped("allocated"), a.n)
	})
}

func (a *anchorRun) setupAlone(ctx context.Context) error {
	if err := a.e.namespace(ctx, a.aloneNS); err != nil {
		return err
	}
	return a.e.backend.pools.create(ctx, a.e, a.aloneNS, a.aloneRange, false)
}

func (a *anchorRun) setupPinned(ctx context.Context) error {
	if err := a.e.namespace(ctx, a.pinnedNS); err != nil {
		return err
	}
	return a.e.backend.pools.create(ctx, a.e, a.pinnedNS, a.pinnedRange, true)
}

// alone: N plain LoadBalancer Services, done when the allocator reports an
// address in each one's status.
func (a *anchorRun) alone(ctx context.Context) (outcome, error) {
	return a.services(ctx, a.aloneNS, nil)
}

// pinned: N LoadBalancer Services, each pinned to its own address with
// the allocator's annotation, done when the allocator reports that address.
func (a *anchorRun) pinned(ctx context.Context) (outcome, error) {
	return a.services(ctx, a.pinnedNS, func(i int) string { return nthAddress(a.pinnedRange, i).String() })
}

// services creates N LoadBalancer Services in ns, drawing from the pool of
// the same name, pinned to pin(i) unless pin is nil, and waits until the
// allocator reports an address (the pinned one) for every one.
func (a *anchorRun) services(ctx context.Context, ns string, pin func(i int) string) (outcome, error) {
	want := map[string]string{} // Service → pinned IP, "" for any
	for i := range a.n {
		want[serviceName(i)] = ""
		if pin != nil {
			want[serviceName(i)] = pin(i)
		}
	}
	p := newProgress()
	a.e.handlers.set(nil, nil, onWanted(ns, want, func(svc *corev1.Service, ip string, at time.Time) {
		if slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in corev1.LoadBalancerIngress) bool {
			return in.IP != "" && (ip == "" || in.IP == ip)
		}) {
			p.stamp("assigned", svc.Name, at)
		}
	}))
	err := a.e.createEach(ctx, a.n, p, func(i int) client.Object {
		return b.Service(ns, serviceName(i), a.e.backend.pools.service(ns, want[serviceName(i)])...)
	})
	if err != nil {
		return outcome{}, err
	}
	return p.settle(ctx, "created", "assigned", func() bool { return p.stamped("assigned") == a.n }, func() string {
		return fmt.Sprintf("%d of %d Services given an address by %s", p.stamped("assigned"), a.n, a.e.backend.title)
	})
}

// cleanup deletes the allocator's anchors' namespaces, waits until they are
// gone, then deletes their pools, so that the allocator has nothing of
// theirs left when the product's scenarios start.
func (a *anchorRun) cleanup(ctx context.Context) error {
	for _, ns := range []string{a.aloneNS, a.pinnedNS} {
		if err := a.e.deleteNamespace(ctx, ns); err != nil {
			return err
		}
		if err := a.e.backend.pools.remove(ctx, a.e, ns); err != nil {
			return err
		}
	}
	return nil
}
