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
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// staticProvisioner serves no class: the static class runs through the core
// alone, from addresses an admin created.
const staticProvisioner = "static.chaos.local.sdn.cozystack.io"

// The workload's class names: two classes of the driver under chaos (MetalLB
// or Cilium), one per reclaim policy, and the static class.
const (
	classDelete = "chaos-delete"
	classRetain = "chaos-retain"
	classStatic = "chaos-static"
)

// The workload's classes and their ranges; none overlaps another.
var classes = []struct {
	name string
	// driven: served by the driver under chaos; otherwise static.
	driven  bool
	reclaim v1alpha1.ReclaimPolicy
	v4, v6  netip.Prefix
}{
	{classDelete, true, v1alpha1.ReclaimDelete, netip.MustParsePrefix("100.80.0.0/21"), netip.MustParsePrefix("fd00:210::/116")},
	{classRetain, true, v1alpha1.ReclaimRetain, netip.MustParsePrefix("100.80.8.0/21"), netip.MustParsePrefix("fd00:211::/116")},
	{classStatic, false, v1alpha1.ReclaimDelete, netip.MustParsePrefix("100.80.16.0/20"), netip.MustParsePrefix("fd00:212::/116")},
}

// inPools says whether ip is in any class's range.
func inPools(ip netip.Addr) bool {
	for _, c := range classes {
		if c.v4.Contains(ip) || c.v6.Contains(ip) {
			return true
		}
	}
	return false
}

// claimPlan is one claim of the workload.
type claimPlan struct {
	name, class string
	family      v1alpha1.IPFamily
	driven      bool // of a class of the driver under chaos
}

// workload creates, rebuilds, toggles and deletes at a steady pace while
// the kills go on.
type workload struct {
	e   *env
	rng *rand.Rand
	// t carries the operations out: the workload itself, on the product,
	// or MetalLB alone's tenant (aloneTenant), on plain Services.
	t      tenant
	claims []claimPlan
	// serviceClaim is the claim index each Service names.
	serviceClaim []int
	// early are the claims created and deleted a moment later.
	early []claimPlan
	// limits are the classes' addressesPerNamespace (Config.Limits).
	limits map[string]int32
	ops    []op

	mu     sync.Mutex
	counts map[string]int
	errs   []string
	// late are the rebuilds that stopped waiting for their old Service
	// (lateDeletion).
	late []string
	done time.Time
}

// tenant is what each kind of operation does.
type tenant interface {
	createClaim(ctx context.Context, i int) error
	createService(ctx context.Context, j int) error
	rebuild(ctx context.Context, j int) error
	toggle(ctx context.Context, j int) error
	move(ctx context.Context, j int) error
	createAndDelete(ctx context.Context, k int) error
	deleteClaim(ctx context.Context, i int) error
}

type op struct {
	kind string
	run  func(ctx context.Context) error
}

func serviceName(j int) string { return fmt.Sprintf("svc-%04d", j) }

// movedName is the Service a move creates for Service j's claim.
func movedName(j int) string { return serviceName(j) + "-moved" }

// plan decides every claim's class and family, which Services are rebuilt
// or toggled, and which claims are deleted, from the seed.
func plan(e *env, seed int64) *workload {
	cfg := e.cfg
	w := &workload{e: e, rng: rand.New(rand.NewPCG(uint64(seed), 0x776f726b)), counts: map[string]int{}, limits: map[string]int32{}}
	w.t = w
	nStatic := int(float64(cfg.Claims) * cfg.StaticShare)
	nRetain := int(float64(cfg.Claims) * cfg.RetainShare)
	order := w.rng.Perm(cfg.Claims)
	w.claims = make([]claimPlan, cfg.Claims)
	for rank, i := range order {
		c := claimPlan{name: fmt.Sprintf("claim-%04d", i), family: cfg.Families[i%len(cfg.Families)]}
		switch {
		case rank < nStatic:
			c.class = classStatic
		case rank < nStatic+nRetain:
			c.class, c.driven = classRetain, true
		default:
			c.class, c.driven = classDelete, true
		}
		w.claims[i] = c
	}
	named := map[int]bool{}
	for i := range w.claims {
		if len(w.serviceClaim) < cfg.Services && w.claims[i].driven {
			w.serviceClaim = append(w.serviceClaim, i)
			named[i] = true
		}
	}

	// Claims first, each Service right after its claim: associations are
	// asked for while claims are still being provisioned.
	svcOf := map[int]int{}
	for j, i := range w.serviceClaim {
		svcOf[i] = j
	}
	for i := range w.claims {
		w.ops = append(w.ops, op{"claim created", func(ctx context.Context) error { return w.t.createClaim(ctx, i) }})
		if j, ok := svcOf[i]; ok {
			w.ops = append(w.ops, op{"association (Service created)", func(ctx context.Context) error { return w.t.createService(ctx, j) }})
		}
	}
	// Then rebuilds, toggles and claim deletions, shuffled together.
	svcOrder := w.rng.Perm(len(w.serviceClaim))
	var later []op
	for _, j := range svcOrder[:cfg.Rebuilds] {
		later = append(later, op{"rebuild", func(ctx context.Context) error { return w.t.rebuild(ctx, j) }})
	}
	for _, j := range svcOrder[cfg.Rebuilds : cfg.Rebuilds+cfg.Toggles] {
		later = append(later, op{"toggle", func(ctx context.Context) error { return w.t.toggle(ctx, j) }})
	}
	for _, j := range svcOrder[cfg.Rebuilds+cfg.Toggles : cfg.Rebuilds+cfg.Toggles+cfg.Moves] {
		later = append(later, op{"move", func(ctx context.Context) error { return w.t.move(ctx, j) }})
	}
	for k := range cfg.EarlyDeletions {
		c := claimPlan{name: fmt.Sprintf("early-%04d", k), class: classDelete, family: cfg.Families[k%len(cfg.Families)], driven: true}
		if k%2 == 1 {
			c.class = classRetain
		}
		w.early = append(w.early, c)
		later = append(later, op{"claim created and deleted", func(ctx context.Context) error { return w.t.createAndDelete(ctx, k) }})
	}
	// Half the deletions hit claims whose Service stays, the rest claims no
	// Service names.
	kept := svcOrder[cfg.Rebuilds+cfg.Toggles+cfg.Moves:]
	withService := make([]int, 0, len(kept))
	for _, j := range kept {
		withService = append(withService, w.serviceClaim[j])
	}
	var without []int
	for _, i := range w.rng.Perm(cfg.Claims) {
		if !named[i] {
			without = append(without, i)
		}
	}
	half := min((cfg.ClaimDeletions+1)/2, len(withService))
	victims := append(append([]int(nil), withService[:half]...), without[:min(cfg.ClaimDeletions-half, len(without))]...)
	for _, i := range victims {
		later = append(later, op{"claim deleted", func(ctx context.Context) error { return w.t.deleteClaim(ctx, i) }})
	}
	w.rng.Shuffle(len(later), func(a, b int) { later[a], later[b] = later[b], later[a] })
	w.ops = append(w.ops, later...)
	if cfg.LimitShare > 0 {
		demand := map[string]int32{}
		for _, p := range append(append([]claimPlan(nil), w.claims...), w.early...) {
			demand[p.class] += int32(len(p.family.Families()))
		}
		for class, n := range demand {
			w.limits[class] = max(1, int32(float64(n)*cfg.LimitShare))
		}
	}
	return w
}

// setup makes the classes and the static class's Available addresses, and
// waits until the driver's classes are rendered.
func (w *workload) setup(ctx context.Context) error {
	c := w.e.c
	for _, cl := range classes {
		opts := []b.ClassOption{b.ClassReclaim(cl.reclaim)}
		if limit, ok := w.limits[cl.name]; ok {
			opts = append(opts, b.PerNamespace(limit))
		}
		var class *v1alpha1.IPAddressClass
		if cl.driven {
			params := fmt.Sprintf(`{"addresses": [%q, %q]}`, cl.v4, cl.v6)
			class = b.Class(cl.name, w.e.b.provisioner, append(opts, b.Parameters(params))...)
		} else {
			class = b.Class(cl.name, staticProvisioner, opts...)
		}
		if err := c.Create(ctx, class); err != nil {
			return err
		}
	}
	// Enough static addresses of each family, and five to spare.
	need := map[v1alpha1.IPFamily]int{}
	for _, p := range w.claims {
		if p.class == classStatic {
			for _, f := range p.family.Families() {
				need[f]++
			}
		}
	}
	static := classes[2]
	for f, prefix := range map[v1alpha1.IPFamily]netip.Prefix{v1alpha1.IPv4: static.v4, v1alpha1.IPv6: static.v6} {
		ip := prefix.Addr()
		for range need[f] + 5 {
			ip = ip.Next()
			name := "static-" + strings.NewReplacer(".", "-", ":", "-").Replace(ip.String())
			if err := c.Create(ctx, b.Address(name, ip.String(), static.name)); err != nil {
				return err
			}
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, cl := range classes[:2] {
		for {
			class := &v1alpha1.IPAddressClass{}
			if err := c.Get(ctx, client.ObjectKey{Name: cl.name}, class); err != nil {
				return err
			}
			if meta.IsStatusConditionTrue(class.Status.Conditions, v1alpha1.ConditionRendered) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("class %s not rendered within a minute: %v", cl.name, class.Status.Conditions)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// run issues the operations evenly over d, each at its time as independent
// tenants would: an operation that waits (a rebuild waits for its Service
// to go) delays no other. At most cfg.Workers run at once when it is set.
func (w *workload) run(ctx context.Context, d time.Duration) {
	interval := d / time.Duration(max(len(w.ops), 1))
	var slots chan struct{}
	if w.e.cfg.Workers > 0 {
		slots = make(chan struct{}, w.e.cfg.Workers)
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i, o := range w.ops {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		if slots != nil {
			slots <- struct{}{}
		}
		wg.Go(func() {
			defer func() {
				if slots != nil {
					<-slots
				}
			}()
			err := o.run(ctx)
			if late := (lateDeletion{}); errors.As(err, &late) {
				w.mu.Lock()
				w.late = append(w.late, late.Error())
				w.mu.Unlock()
				return
			}
			if err != nil {
				w.failed(o.kind, err)
				return
			}
			w.mu.Lock()
			w.counts[o.kind]++
			w.mu.Unlock()
		})
	}
	wg.Wait()
	w.mu.Lock()
	w.done = time.Now()
	w.mu.Unlock()
	w.e.cfg.logf("Workload done: %v, %d errors", w.summary(), len(w.errors()))
}

func (w *workload) failed(kind string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, kind+": "+err.Error())
}

func (w *workload) lateRebuilds() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.late...)
}

func (w *workload) summary() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.counts)
}

func (w *workload) errors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errs...)
}

func (w *workload) createClaim(ctx context.Context, i int) error {
	p := w.claims[i]
	return w.e.c.Create(ctx, b.Claim(tenantNamespace, p.name, b.OfClass(p.class), b.Family(p.family)))
}

// service is Service j as created: of its claim's families, naming it.
func (w *workload) service(j int) *corev1.Service {
	p := w.claims[w.serviceClaim[j]]
	opts := []b.ServiceOption{b.ForClaim(p.name)}
	switch p.family {
	case v1alpha1.IPv6:
		opts = append(opts, b.IPv6Only())
	case v1alpha1.Dual:
		opts = append(opts, b.DualStack())
	}
	return b.Service(tenantNamespace, serviceName(j), opts...)
}

func (w *workload) createService(ctx context.Context, j int) error {
	return w.e.c.Create(ctx, w.service(j))
}

// rebuildWait is how long a rebuild waits for its old Service to go.
const rebuildWait = 3 * time.Minute

// lateDeletion: a rebuild's old Service was still there rebuildWait after
// its deletion. The rebuild stops waiting and makes no new Service; the old
// one is left to the convergence check, which counts Services still being
// deleted. After a start of MetalLB, the driver lets a carrier go only once
// MetalLB has given the address back to its hold (a shared handoff), so
// how long that takes is MetalLB's catch-up and backlog, which the report
// measures from MetalLB's log; a fixed limit here would judge MetalLB's
// pace instead (docs/chaos.md, Convergence).
type lateDeletion struct{ key string }

func (l lateDeletion) Error() string {
	return fmt.Sprintf("Service %s was still being deleted %s after its deletion", l.key, rebuildWait)
}

// rebuild deletes Service j, waits until it is gone (the driver's carrier
// finalizer keeps it until its hold is back), and creates it again naming
// the same claim: a dissociation and an association.
func (w *workload) rebuild(ctx context.Context, j int) error {
	svc := w.service(j)
	if err := w.e.c.Delete(ctx, svc); client.IgnoreNotFound(err) != nil {
		return err
	}
	deadline := time.Now().Add(rebuildWait)
	for {
		err := w.e.c.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			return lateDeletion{key: svc.Namespace + "/" + svc.Name}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return w.e.c.Create(ctx, w.service(j))
}

// toggle removes Service j's annotation, waits one to three seconds, and
// puts it back: a dissociation and an association.
func (w *workload) toggle(ctx context.Context, j int) error {
	patch := func(value any) error {
		body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, v1alpha1.AnnotationIPAddressClaim, value)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNamespace, Name: serviceName(j)}}
		return w.e.c.Patch(ctx, svc, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	if err := patch("null"); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second + time.Duration(w.jitter(2*time.Second))):
	}
	return patch(fmt.Sprintf("%q", w.claims[w.serviceClaim[j]].name))
}

func (w *workload) jitter(d time.Duration) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Int64N(int64(d))
}

// move takes Service j's annotation away and, at once, creates another
// Service naming its claim, on another port (so that MetalLB could share
// the address between the two, were both pinned with the claim's key): the
// driver must let the first go (withdrawn) before it pins the second.
func (w *workload) move(ctx context.Context, j int) error {
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, v1alpha1.AnnotationIPAddressClaim)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNamespace, Name: serviceName(j)}}
	if err := w.e.c.Patch(ctx, svc, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		return err
	}
	moved := w.service(j)
	moved.Name = movedName(j)
	b.Port(8080)(moved)
	return w.e.c.Create(ctx, moved)
}

// createAndDelete creates early claim k and deletes it as soon as the
// driver has made an allocation placeholder for it (or after 30 s): while
// MetalLB has yet to answer it, or the driver to record what it answered.
func (w *workload) createAndDelete(ctx context.Context, k int) error {
	p := w.early[k]
	claim := b.Claim(tenantNamespace, p.name, b.OfClass(p.class), b.Family(p.family))
	if err := w.e.c.Create(ctx, claim); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		list := &corev1.ServiceList{}
		if err := w.e.c.List(ctx, list, client.InNamespace(w.e.b.placeholderNamespace),
			client.MatchingLabels{v1alpha1.LabelClaimUID: string(claim.UID)}); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return w.e.c.Delete(ctx, claim, client.Preconditions{UID: &claim.UID})
}

// deleteClaim deletes claim i once it is Bound (or after a minute), so that
// its deletion reclaims an address.
func (w *workload) deleteClaim(ctx context.Context, i int) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		cl := &v1alpha1.IPAddressClaim{}
		if err := w.e.c.Get(ctx, client.ObjectKey{Namespace: tenantNamespace, Name: w.claims[i].name}, cl); err != nil {
			return err
		}
		if cl.Status.Phase == v1alpha1.ClaimBound {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return w.e.c.Delete(ctx, b.Claim(tenantNamespace, w.claims[i].name))
}
