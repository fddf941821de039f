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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
)

// MetalLB alone under the product's MetalLB kills (Config.MetalLBAlone): the
// run's workload plan, from the same seed and at the same pace, carried out
// on plain LoadBalancer Services on a cluster of its own, with no manager,
// while MetalLB is killed at the same moments of the kill window as in the
// product's run. Its catch-up and its convergence after it, read the same
// way from its log, are MetalLB's own figure for the load, beside the
// product's (docs/chaos.md, "MetalLB alone").
//
// What a tenant without the product would do: a Service keeps each address
// of a MetalLB class (keep-<claim>, of the claim's families); a Service
// naming a claim is created and that keeper deleted; a rebuild deletes the
// Service and creates it again; a move creates the new Service and deletes
// the old; a claim's deletion deletes its keeper once it has an address (a
// minute at most); a claim created and deleted at once is a Service
// created and deleted. Static claims and annotation toggles have no
// MetalLB counterpart. The Services carry no sharing key: without the
// product no address is shared.

// alonePool is MetalLB's pool for the run, over the driver's classes'
// ranges, serving the tenants' namespace.
const alonePool = "chaos-alone"

// aloneTenant carries the workload's operations out on plain Services.
type aloneTenant struct {
	w *workload

	mu      sync.Mutex
	created int
}

func keeperName(claim string) string { return "keep-" + claim }

// service is a plain LoadBalancer Service of family.
func (a *aloneTenant) service(name string, family v1alpha1.IPFamily) *corev1.Service {
	var opts []b.ServiceOption
	switch family {
	case v1alpha1.IPv6:
		opts = append(opts, b.IPv6Only())
	case v1alpha1.Dual:
		opts = append(opts, b.DualStack())
	}
	return b.Service(tenantNamespace, name, opts...)
}

func (a *aloneTenant) create(ctx context.Context, svc *corev1.Service) error {
	if err := a.w.e.c.Create(ctx, svc); err != nil {
		return err
	}
	a.mu.Lock()
	a.created++
	a.mu.Unlock()
	return nil
}

func (a *aloneTenant) remove(ctx context.Context, name string) error {
	svc := &corev1.Service{}
	svc.Namespace, svc.Name = tenantNamespace, name
	return client.IgnoreNotFound(a.w.e.c.Delete(ctx, svc))
}

func (a *aloneTenant) createClaim(ctx context.Context, i int) error {
	p := a.w.claims[i]
	if !p.driven {
		return nil
	}
	return a.create(ctx, a.service(keeperName(p.name), p.family))
}

func (a *aloneTenant) createService(ctx context.Context, j int) error {
	p := a.w.claims[a.w.serviceClaim[j]]
	if err := a.create(ctx, a.service(serviceName(j), p.family)); err != nil {
		return err
	}
	return a.remove(ctx, keeperName(p.name))
}

func (a *aloneTenant) rebuild(ctx context.Context, j int) error {
	// A plain Service has no finalizer: it is gone when its deletion returns.
	if err := a.remove(ctx, serviceName(j)); err != nil {
		return err
	}
	return a.create(ctx, a.service(serviceName(j), a.w.claims[a.w.serviceClaim[j]].family))
}

func (a *aloneTenant) toggle(context.Context, int) error { return nil }

func (a *aloneTenant) move(ctx context.Context, j int) error {
	moved := a.service(movedName(j), a.w.claims[a.w.serviceClaim[j]].family)
	b.Port(8080)(moved)
	if err := a.create(ctx, moved); err != nil {
		return err
	}
	return a.remove(ctx, serviceName(j))
}

func (a *aloneTenant) createAndDelete(ctx context.Context, k int) error {
	p := a.w.early[k]
	if err := a.create(ctx, a.service(p.name, p.family)); err != nil {
		return err
	}
	return a.remove(ctx, p.name)
}

func (a *aloneTenant) deleteClaim(ctx context.Context, i int) error {
	key := client.ObjectKey{Namespace: tenantNamespace, Name: keeperName(a.w.claims[i].name)}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		svc := &corev1.Service{}
		if err := a.w.e.c.Get(ctx, key, svc); err != nil {
			return client.IgnoreNotFound(err) // named by a Service: its keeper went then
		}
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return a.remove(ctx, key.Name)
}

// runAlone runs MetalLB alone under the kills of MetalLB at killsAt after
// the start of the kill window, and reports it as a Result whose MetalLB
// fields and convergence are MetalLB's own.
func runAlone(ctx context.Context, cfg Config, killsAt []time.Duration) (res *Result, err error) {
	cfg = cfg.withDefaults()
	res = &Result{Name: cfg.Name + ", MetalLB alone", Allocator: "MetalLB alone", Seed: cfg.Seed,
		LimitSeconds: cfg.Converge.Seconds(), ConvergedAfterSeconds: -1, ConvergedAfterLastKillSeconds: -1,
		StaticConvergedAfterSeconds: -1, StaticConvergedAfterLastKillSeconds: -1}
	began := time.Now()
	e, err := startCluster(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { e.finish(res, began, err != nil) }()
	if err := alonePoolReady(ctx, e); err != nil {
		return res, err
	}
	services, err := cache.New(e.cluster.Config, cache.Options{Scheme: newScheme(),
		DefaultNamespaces: map[string]cache.Config{tenantNamespace: {}}})
	if err != nil {
		return res, err
	}
	if _, err := services.GetInformer(ctx, &corev1.Service{}); err != nil {
		return res, err
	}
	cctx, stopCache := context.WithCancel(ctx)
	defer stopCache()
	go func() { _ = services.Start(cctx) }()
	if !services.WaitForCacheSync(ctx) {
		return res, fmt.Errorf("the Services' cache did not sync")
	}

	w := plan(e, cfg.Seed)
	t := &aloneTenant{w: w}
	w.t = t
	cfg.logf("MetalLB alone: %d operations over %s on plain Services, MetalLB killed %d times as in the product's run",
		len(w.ops), time.Duration(float64(cfg.Duration)*cfg.WorkloadShare).Round(time.Second), len(killsAt))
	k := newKiller(e, cfg.Seed, &allocatorKills{})
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, time.Duration(float64(cfg.Duration)*cfg.WorkloadShare)) })
	k.replay(ctx, killsAt)
	wg.Wait()
	kills, lastKill, killErrs := k.summary()
	res.Kills, res.KillErrors, res.KillTotal = kills, killErrs, kills[killMetalLB]
	res.Operations, res.WorkloadErrors = w.summary(), w.errors()
	res.Size = Size{Services: t.created, KillSeconds: cfg.Duration.Seconds()}
	res.WorkloadEndedBeforeLastKillSeconds = lastKill.Sub(w.done).Seconds()
	from := lastKill
	if w.done.After(from) {
		from = w.done
	}
	converged, last := waitStable(ctx, cfg, from, "MetalLB alone, ", func(time.Time) (bool, string) {
		list := &corev1.ServiceList{}
		if err := services.List(ctx, list); err != nil {
			return false, err.Error()
		}
		return servicesSettled(list.Items)
	})
	res.Final = last
	// Every Service can have its address before MetalLB's catch-up ends
	// (the addresses it wrote before a kill stay): wait for the catch-up
	// too, so that the report has MetalLB's own figure.
	waitCaughtUp(ctx, e.cluster.MetalLBLog(), from.Add(cfg.Converge+cfg.Patience))
	res.judge(cfg, k.began, lastKill, from, converged, res.readMetalLB(e.cluster.MetalLBLog(), lastKill, converged))
	cfg.logf("MetalLB alone: %d kills, converged=%v %.1fs after the last kill: %s",
		res.KillTotal, res.Converged, res.ConvergedAfterLastKillSeconds, res.Final)
	return res, nil
}

// waitCaughtUp waits until MetalLB's log at path shows the end of its
// catch-up after its last start, or until deadline.
func waitCaughtUp(ctx context.Context, path string, deadline time.Time) {
	tail := &logTail{path: path}
	for tail.read().CaughtUp.IsZero() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// alonePoolReady makes MetalLB's pool over the driver's classes' ranges
// and waits until MetalLB reports it.
func alonePoolReady(ctx context.Context, e *env) error {
	var prefixes []any
	for _, cl := range classes {
		if cl.driven {
			prefixes = append(prefixes, cl.v4.String(), cl.v6.String())
		}
	}
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	pool.SetNamespace(cluster.MetalLBNamespace)
	pool.SetName(alonePool)
	pool.Object["spec"] = map[string]any{
		"addresses":         prefixes,
		"autoAssign":        true,
		"avoidBuggyIPs":     false,
		"serviceAllocation": map[string]any{"namespaces": []any{tenantNamespace}},
	}
	if err := e.c.Create(ctx, pool); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(params.IPAddressPoolGVK)
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
			return err
		}
		if free, _, _ := unstructured.NestedInt64(got.Object, "status", "availableIPv4"); free > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("MetalLB did not report pool %s within a minute", alonePool)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// servicesSettled says whether every Service has an address of each of its
// families from the pool, none is being deleted, and no address is on two
// of them.
func servicesSettled(services []corev1.Service) (bool, string) {
	held := map[netip.Addr]bool{}
	waiting, shared := 0, 0
	for _, svc := range services {
		var ips []netip.Addr
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if ip, err := netip.ParseAddr(in.IP); err == nil && inPools(ip) {
				ips = append(ips, ip)
			}
		}
		if svc.DeletionTimestamp != nil || len(ips) != len(svc.Spec.IPFamilies) {
			waiting++
		}
		for _, ip := range ips {
			if held[ip] {
				shared++
			}
			held[ip] = true
		}
	}
	state := fmt.Sprintf("%d Services, %d waiting for their addresses, %d addresses on two Services", len(services), waiting, shared)
	return waiting == 0 && shared == 0, state
}
