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
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// staticProvisioner serves no class: no driver answers to it, so the static
// path runs through the core alone.
const staticProvisioner = "static.bench.local.sdn.cozystack.io"

// Minimal writes per claim on each path, reasoned in docs/performance.md.
const (
	minWritesStatic    = 5
	minWritesDriver    = 13
	minWritesAssociate = 7
	minWritesTeardown  = 7
)

// sizeRun is one size's scenarios and the state they hand each other: the
// driver's path's claims, which association and teardown use.
type sizeRun struct {
	e                        *env
	n                        int
	staticNS, driverNS       string
	staticClass, driverClass string
	staticRange, driverRange netip.Prefix

	// bound maps each claim of the driver's path to its address.
	bound map[string]v1alpha1.ClaimedAddress
}

// The ranges of the i-th size: a /16 each for its two classes and four
// anchors, in 100.64.0.0/10 (RFC 6598) from 100.64.0.0 up, below the node
// harness's pods (100.96.0.0/16) and the cluster's Services
// (100.112.0.0/12): at most maxSizes sizes.
const (
	rangeStatic = iota
	rangeDriver
	rangePeer
	rangePeerUnthrottled
	rangeAlone
	rangePinned
	rangesPerSize
	maxSizes = (96 - 64) / rangesPerSize
)

// sizeRange is the /16 k of the i-th size.
func sizeRange(i, k int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{100, byte(64 + rangesPerSize*i + k), 0, 0}), 16)
}

// newSizeRun names the namespaces, classes and ranges of the i-th size:
// each class gets its own /16, so no two overlap.
func newSizeRun(e *env, i, n int) *sizeRun {
	return &sizeRun{
		e: e, n: n,
		staticNS: fmt.Sprintf("bench-static-%d", n), driverNS: fmt.Sprintf("bench-%s-%d", e.backend.name, n),
		staticClass: fmt.Sprintf("bench-static-%d", n), driverClass: fmt.Sprintf("bench-%s-%d", e.backend.name, n),
		staticRange: sizeRange(i, rangeStatic),
		driverRange: sizeRange(i, rangeDriver),
	}
}

func (s *sizeRun) scenarios() []scenario {
	return []scenario{
		{name: "a-static", minWrites: minWritesStatic, setup: s.setupStatic, body: s.static,
			objects: func(ctx context.Context) ([]ObjectSize, error) { return s.e.claimObjects(ctx, s.staticNS) }},
		{name: s.e.backend.scenario(), minWrites: minWritesDriver, setup: s.setupDriver, body: s.provision,
			objects: func(ctx context.Context) ([]ObjectSize, error) { return s.e.claimObjects(ctx, s.driverNS) }},
		{name: "c-associate", minWrites: minWritesAssociate, body: s.associate},
		{name: "d-teardown", minWrites: minWritesTeardown, body: s.teardown},
	}
}

func claimName(i int) string   { return fmt.Sprintf("claim-%05d", i) }
func serviceName(i int) string { return fmt.Sprintf("svc-%05d", i) }

// nthAddress is the i-th host address of p (the network address skipped).
func nthAddress(p netip.Prefix, i int) netip.Addr {
	base := p.Masked().Addr().As4()
	v := binary.BigEndian.Uint32(base[:]) + uint32(i) + 1
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], v)
	return netip.AddrFrom4(out)
}

func addressObjectName(ip netip.Addr) string {
	return "ip-" + strings.ReplaceAll(ip.String(), ".", "-")
}

// setupStatic makes the static class and N Available addresses of it.
func (s *sizeRun) setupStatic(ctx context.Context) error {
	e := s.e
	if s.n+2 > 1<<(32-s.staticRange.Bits()) {
		return fmt.Errorf("%d addresses do not fit %s", s.n, s.staticRange)
	}
	if err := e.namespace(ctx, s.staticNS); err != nil {
		return err
	}
	class := b.Class(s.staticClass, staticProvisioner, b.ClassReclaim(v1alpha1.ReclaimDelete))
	if err := e.c.Create(ctx, class); err != nil {
		return err
	}
	p := newProgress()
	e.handlers.set(nil, func(o client.Object, gone bool, _ time.Time) {
		a := o.(*v1alpha1.IPAddress)
		if a.Spec.ClassName == s.staticClass {
			p.set("available", a.Name, !gone && a.Status.Phase == v1alpha1.AddressAvailable)
		}
	}, nil)
	start := time.Now()
	err := parallel(ctx, s.n, e.cfg.Workers, func(ctx context.Context, i int) error {
		ip := nthAddress(s.staticRange, i)
		return e.c.Create(ctx, b.Address(addressObjectName(ip), ip.String(), s.staticClass))
	})
	if err != nil {
		return err
	}
	if err := p.wait(ctx, func() bool { return p.size("available") == s.n }); err != nil {
		return fmt.Errorf("%d of %d static addresses Available: %w", p.size("available"), s.n, err)
	}
	e.cfg.logf("N=%d: %d static addresses Available in %s", s.n, s.n, time.Since(start).Round(time.Millisecond))
	return nil
}

// createClaims creates the N claims of a class, stamping when each create
// returned, and returns their UIDs by name.
func (s *sizeRun) createClaims(ctx context.Context, ns, class string, p *progress) (map[string]types.UID, error) {
	claims := make([]*v1alpha1.IPAddressClaim, s.n) // each worker fills its own slots
	err := s.e.createEach(ctx, s.n, p, func(i int) client.Object {
		claims[i] = b.Claim(ns, claimName(i), b.OfClass(class))
		return claims[i]
	})
	uids := map[string]types.UID{}
	for _, c := range claims {
		if c != nil && c.UID != "" { // created: the API server gave it its UID
			uids[c.Name] = c.UID
		}
	}
	return uids, err
}

// static: N claims of the static class, all Bound to the admin's addresses.
func (s *sizeRun) static(ctx context.Context) (outcome, error) {
	p := newProgress()
	s.e.handlers.set(func(o client.Object, gone bool, at time.Time) {
		c := o.(*v1alpha1.IPAddressClaim)
		if c.Namespace == s.staticNS && !gone && c.Status.Phase == v1alpha1.ClaimBound {
			p.stamp("bound", c.Name, at)
		}
	}, func(o client.Object, gone bool, _ time.Time) {
		a := o.(*v1alpha1.IPAddress)
		if a.Spec.ClassName == s.staticClass {
			p.set("addressBound", a.Name, !gone && a.Status.Phase == v1alpha1.AddressBound)
		}
	}, nil)
	if _, err := s.createClaims(ctx, s.staticNS, s.staticClass, p); err != nil {
		return outcome{}, err
	}
	return p.settle(ctx, "created", "bound", func() bool { return p.stamped("bound") == s.n && p.size("addressBound") == s.n }, func() string {
		return fmt.Sprintf("%d of %d claims Bound, %d addresses Bound", p.stamped("bound"), s.n, p.size("addressBound"))
	})
}

// setupDriver makes the driver's class, reclaimPolicy Delete, and waits
// until the driver rendered it.
func (s *sizeRun) setupDriver(ctx context.Context) error {
	e := s.e
	if err := e.namespace(ctx, s.driverNS); err != nil {
		return err
	}
	params := fmt.Sprintf(`{"addresses": [%q]}`, s.driverRange.String())
	class := b.Class(s.driverClass, e.backend.provisioner,
		b.Parameters(params), b.ClassReclaim(v1alpha1.ReclaimDelete))
	if err := e.c.Create(ctx, class); err != nil {
		return err
	}
	// A one-off wait on the watch cache, not on the API server.
	for {
		c := &v1alpha1.IPAddressClass{}
		if err := e.cache.Get(ctx, client.ObjectKey{Name: s.driverClass}, c); err == nil {
			if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRendered); cond != nil {
				if cond.Status != metav1.ConditionTrue {
					return fmt.Errorf("class %s not rendered: %s", s.driverClass, cond.Message)
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("class %s not rendered: %w", s.driverClass, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// provision: N claims of the driver's class, all Bound to addresses its
// allocator allocated through placeholders. It times each step of the path:
// the allocation placeholder appearing, the allocator assigning it an
// address, the IPAddress being recorded, the claim being Bound.
func (s *sizeRun) provision(ctx context.Context) (outcome, error) {
	p := newProgress()
	s.e.handlers.set(func(o client.Object, gone bool, at time.Time) {
		c := o.(*v1alpha1.IPAddressClaim)
		if c.Namespace == s.driverNS && !gone && c.Status.Phase == v1alpha1.ClaimBound {
			p.stamp("bound", string(c.UID), at)
		}
	}, func(o client.Object, gone bool, at time.Time) {
		a := o.(*v1alpha1.IPAddress)
		if a.Spec.ClassName != s.driverClass {
			return
		}
		if ref := a.Spec.ClaimRef; ref != nil && !gone {
			p.stamp("recorded", string(ref.UID), at)
		}
		held := meta.IsStatusConditionTrue(a.Status.Conditions, v1alpha1.ConditionHeld)
		p.set("ready", a.Name, !gone && a.Status.Phase == v1alpha1.AddressBound && held)
	}, func(o client.Object, gone bool, at time.Time) {
		svc := o.(*corev1.Service)
		uid := svc.Labels[v1alpha1.LabelClaimUID]
		if svc.Namespace != s.e.backend.placeholderNamespace || uid == "" || svc.Labels[v1alpha1.LabelClass] != s.driverClass || gone {
			return
		}
		p.stamp("placeholder", uid, at)
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			p.stamp("assigned", uid, at)
		}
	})
	uids, err := s.createClaims(ctx, s.driverNS, s.driverClass, p)
	if err != nil {
		return outcome{}, err
	}
	// Milestones after creation are keyed by claim UID: a watch event may
	// beat the create call's return.
	for name, uid := range uids {
		if t, ok := p.at("created", name); ok {
			p.stamp("createdUID", string(uid), t)
		}
	}
	o, err := p.settle(ctx, "createdUID", "bound", func() bool { return p.stamped("bound") == s.n && p.size("ready") == s.n }, func() string {
		return fmt.Sprintf("%d of %d claims Bound, %d addresses Bound and held", p.stamped("bound"), s.n, p.size("ready"))
	})
	if err != nil {
		return o, err
	}
	o.stages = []Stage{
		stage("claim created → allocation placeholder (core stamp + driver)", p.between("createdUID", "placeholder")),
		stage("placeholder → "+s.e.backend.title+" assigned an IP", p.between("placeholder", "assigned")),
		stage("assigned → IPAddress recorded (driver)", p.between("assigned", "recorded")),
		stage("recorded → claim Bound (core)", p.between("recorded", "bound")),
	}
	// Association and teardown work on these claims and their addresses.
	s.bound = map[string]v1alpha1.ClaimedAddress{}
	for name := range uids {
		c := &v1alpha1.IPAddressClaim{}
		if err := s.e.cache.Get(ctx, client.ObjectKey{Namespace: s.driverNS, Name: name}, c); err != nil {
			return outcome{}, err
		}
		if len(c.Status.Addresses) != 1 {
			return outcome{}, fmt.Errorf("claim %s is Bound to %d addresses", name, len(c.Status.Addresses))
		}
		s.bound[name] = c.Status.Addresses[0]
	}
	return o, nil
}

func stage(name string, ds []time.Duration) Stage {
	p50, p99 := quantiles(ds)
	return Stage{Name: name, Count: len(ds), P50Ms: ms(p50), P99Ms: ms(p99)}
}

// associate: N LoadBalancer Services, each annotated with one claim of the
// driver's path, all pinned by the driver and given the address by its
// allocator.
func (s *sizeRun) associate(ctx context.Context) (outcome, error) {
	if len(s.bound) != s.n {
		return outcome{}, fmt.Errorf("the %s path left %d bound claims, not %d", s.e.backend.title, len(s.bound), s.n)
	}
	want := map[string]string{} // Service → IP
	for i := range s.n {
		want[serviceName(i)] = s.bound[claimName(i)].Address
	}
	p := newProgress()
	s.e.handlers.set(nil, nil, onWanted(s.driverNS, want, func(svc *corev1.Service, ip string, at time.Time) {
		if svc.Annotations[s.e.backend.pin] == ip {
			p.stamp("pinned", svc.Name, at)
			carries := func(in corev1.LoadBalancerIngress) bool { return in.IP == ip }
			if slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, carries) {
				p.stamp("carried", svc.Name, at)
			}
		}
	}))
	err := s.e.createEach(ctx, s.n, p, func(i int) client.Object {
		return b.Service(s.driverNS, serviceName(i), b.ForClaim(claimName(i)))
	})
	if err != nil {
		return outcome{}, err
	}
	o, err := p.settle(ctx, "created", "carried", func() bool { return p.stamped("carried") == s.n }, func() string {
		return fmt.Sprintf("%d of %d Services pinned, %d carrying their address", p.stamped("pinned"), s.n, p.stamped("carried"))
	})
	if err != nil {
		return o, err
	}
	o.stages = []Stage{
		stage("Service created → pinned (driver)", p.between("created", "pinned")),
		stage("pinned → "+s.e.backend.title+" reports the address", p.between("pinned", "carried")),
	}
	return o, nil
}

// teardown: the N claims of the driver's path deleted while their Services
// still carry them; done when every IPAddress of the class, every
// placeholder of the class and every assignment of its range by the
// allocator is gone.
func (s *sizeRun) teardown(ctx context.Context) (outcome, error) {
	claimOf := map[string]string{} // IPAddress name → claim
	for claim, a := range s.bound {
		claimOf[a.Name] = claim
	}
	inRange := func(svc *corev1.Service) bool {
		return slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in corev1.LoadBalancerIngress) bool {
			ip, err := netip.ParseAddr(in.IP)
			return err == nil && s.driverRange.Contains(ip)
		})
	}
	isPlaceholder := func(svc *corev1.Service) bool {
		return svc.Namespace == s.e.backend.placeholderNamespace && svc.Labels[v1alpha1.LabelClass] == s.driverClass
	}
	p := newProgress()
	s.e.handlers.set(func(o client.Object, gone bool, at time.Time) {
		if c := o.(*v1alpha1.IPAddressClaim); c.Namespace == s.driverNS && gone {
			p.set("claims", c.Name, false)
		}
	}, func(o client.Object, gone bool, at time.Time) {
		a := o.(*v1alpha1.IPAddress)
		if a.Spec.ClassName != s.driverClass {
			return
		}
		p.set("addresses", a.Name, !gone)
		if claim, ok := claimOf[a.Name]; ok && gone {
			p.stamp("gone", claim, at)
		}
	}, func(o client.Object, gone bool, at time.Time) {
		svc := o.(*corev1.Service)
		switch {
		case isPlaceholder(svc):
			p.set("placeholders", svc.Name, !gone)
		case svc.Namespace == s.driverNS:
			p.set("assigned", svc.Name, !gone && inRange(svc))
		}
	})
	// What is there now, from the watch cache. The handlers are already on,
	// so nothing between the two is missed, and an event they handle while
	// the listing is applied wins over it (seed).
	var addrs v1alpha1.IPAddressList
	var svcs corev1.ServiceList
	var claims v1alpha1.IPAddressClaimList
	if err := s.e.cache.List(ctx, &addrs); err != nil {
		return outcome{}, err
	}
	if err := s.e.cache.List(ctx, &svcs); err != nil {
		return outcome{}, err
	}
	if err := s.e.cache.List(ctx, &claims, client.InNamespace(s.driverNS)); err != nil {
		return outcome{}, err
	}
	for _, a := range addrs.Items {
		if a.Spec.ClassName == s.driverClass {
			p.seed("addresses", a.Name)
		}
	}
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		switch {
		case isPlaceholder(svc):
			p.seed("placeholders", svc.Name)
		case svc.Namespace == s.driverNS && inRange(svc):
			p.seed("assigned", svc.Name)
		}
	}
	for _, c := range claims.Items {
		p.seed("claims", c.Name)
	}
	remove := func(ctx context.Context, o client.Object) error { return s.e.c.Delete(ctx, o) }
	err := s.e.writeEach(ctx, s.n, p, "deleted", remove, func(i int) client.Object {
		return b.Claim(s.driverNS, claimName(i))
	})
	if err != nil {
		return outcome{}, err
	}
	ledgerEmpty := func() bool {
		return p.size("claims") == 0 && p.size("addresses") == 0 && p.size("placeholders") == 0
	}
	o, err := p.settle(ctx, "deleted", "gone", ledgerEmpty, func() string {
		return fmt.Sprintf("left: %d claims, %d IPAddresses, %d placeholders (%s), %d Services carrying an address",
			p.size("claims"), p.size("addresses"), p.size("placeholders"), p.some("placeholders", 5), p.size("assigned"))
	})
	if err != nil {
		return o, err
	}
	ledgerGone := time.Now()
	// The allocator takes the addresses back from the Services once the
	// driver withdrew its pins, at its own pace: MetalLB between full passes
	// that, at this size, take a minute and more each (docs/performance.md,
	// E7). A pin nobody withdraws would keep an address for ever, so this
	// last wait lasts only while Services keep letting go: a minute in which
	// none does ends it.
	if err := p.waitWhileShrinking(ctx, "assigned", time.Minute); err != nil {
		o.end = ledgerGone
		return o, fmt.Errorf("every claim, IPAddress and placeholder is gone, "+
			"but %d Services still carry an address of the class, none let go in the last minute (%s)",
			p.size("assigned"), p.some("assigned", 5))
	}
	s.e.cfg.logf("N=%d: the Services let go of their addresses %.1fs after the last claim, IPAddress and placeholder went",
		s.n, time.Since(ledgerGone).Seconds())
	return o, nil
}

// cleanup deletes the driver's path's namespace before the next size: its
// Services, pending after the teardown, would otherwise keep asking the
// allocator for an address through the next size's measurements. It waits until the
// namespace is gone.
func (s *sizeRun) cleanup(ctx context.Context) error {
	return s.e.deleteNamespace(ctx, s.driverNS)
}
