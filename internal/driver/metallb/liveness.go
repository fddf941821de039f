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

package metallb

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// The probes: headless ClusterIP Services in the placeholder namespace
// that the driver asks MetalLB to touch, in an order of its choosing. There
// are two sets, asked in turn: MetalLB's own writes of a set's answers
// queue events for it, and a question on the same set before MetalLB got to
// them would be answered in their order.
var probeNames = [2][probes]string{
	{"metallb-iad-probe-a0", "metallb-iad-probe-a1", "metallb-iad-probe-a2", "metallb-iad-probe-a3", "metallb-iad-probe-a4"},
	{"metallb-iad-probe-b0", "metallb-iad-probe-b1", "metallb-iad-probe-b2", "metallb-iad-probe-b3", "metallb-iad-probe-b4"},
}

// probes is how many probes a question asks: a full pass answers them in
// the order asked once in 5! = 120 times.
const probes = 5

// annotationProbeAsked is when the driver last asked MetalLB to touch the
// probes.
const annotationProbeAsked = "local.sdn.cozystack.io/probe-asked"

// probePool is the value of MetalLB's ip-allocated-from-pool annotation
// that asks: MetalLB removes the annotation from a Service that is no
// LoadBalancer whenever it handles it.
const probePool = "probe"

// How long things last.
const (
	// defaultTrust is how long an answer from single events is trusted
	// where a start of MetalLB would not show in a pool's status (see
	// watched), unless a phantom shows earlier that MetalLB has been
	// ignoring events (see distrust).
	defaultTrust = 5 * time.Minute
	// askAgainAfter: a question this old is asked again (it was lost: the
	// probes were recreated, or MetalLB's write conflicted).
	askAgainAfter = 2 * time.Minute
	// unansweredAfter: a question unanswered this long says MetalLB is not
	// handling Services (down, no configuration, or in a long full pass).
	unansweredAfter = time.Minute
)

// errCatchingUp is what a write fails with while the gate is shut.
var errCatchingUp = fmt.Errorf("%w: MetalLB is not handling single Service events (after a start it ignores them until one full pass over every Service succeeds); the driver changes no Service until it does",
	driver.ErrNotReady)

// liveness is the MetalLB backend's driver.Gate.
//
// Design: MetalLB v0.15 ignores the events of single Services after a start
// until one full pass over every Service finishes with no failed write, no
// allocation whose key changed and no release; a deletion it ignores is
// never heard of again (a phantom, see PhantomReconciler). Each pass
// rewrites every Service it assigns an address to, so it takes seconds to
// minutes, and any Service the driver changes meanwhile (a pin, a new hold,
// a release) makes it fail and start again, after an exponential back-off.
// So the driver changes no Service while MetalLB ignores single events.
//
// It tells by asking: it sets MetalLB's own ip-allocated-from-pool
// annotation on five probes, one after the other in a random order, and
// MetalLB removes it whenever it handles a probe, which is no LoadBalancer.
// MetalLB handles one thing at a time, in the order things happened: when it
// handles single events, it answers the probes in the order asked (perhaps
// only after a full pass it is running, so how long the answer takes says
// nothing). When it ignores them, only its next full pass answers, in the
// order its list of every Service happens to have, which matches the order
// asked once in 120 times. The order of the answers is read from their
// resource versions (etcd's revisions). Answers in another order mean a
// full pass answered: the driver asks again at once. Answers in order open
// the gate until a pool's status shows that MetalLB started again
// (startedAgain) or a phantom shows that it missed a deletion (distrust).
// Where no pool has enough assigned addresses for a start to show, the
// answer is trusted for the trust period only (5 minutes by default), and
// the next write after it asks again. Nothing is asked while the driver has
// nothing to change.
type liveness struct {
	client  client.Client // not gated
	ns      string
	now     func() time.Time
	metrics *metrics
	trust   time.Duration

	mu       sync.Mutex
	trusted  time.Time // when MetalLB last answered from single events
	asked    time.Time // the question out, zero when none
	set      int       // the set of probes it was asked on
	order    []int     // the order the probes were asked in
	answered map[int]uint64
	next     chan struct{} // closed at the next answer from single events
	always   bool          // the gate never shuts (tests)
	// pools is each MetalLB pool's count of assigned addresses, as last
	// written to its status.
	pools map[string]int64
	// watched: since MetalLB last answered from single events, or since a
	// pool grew able to show a start while that answer was trusted, some
	// pool has always had enough assigned addresses for a start to show in
	// its status, so the answer holds until one does.
	watched bool
}

func newLiveness(c client.Client, ns string, trust time.Duration, m *metrics) *liveness {
	if trust <= 0 {
		trust = defaultTrust
	}
	return &liveness{client: c, ns: ns, now: time.Now, metrics: m, trust: trust, next: make(chan struct{}),
		pools: map[string]int64{}}
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Ready implements driver.Gate.
func (l *liveness) Ready(ctx context.Context) error {
	l.mu.Lock()
	open := l.open()
	l.mu.Unlock()
	if open {
		return nil
	}
	if err := l.ask(ctx); err != nil {
		return err
	}
	return errCatchingUp
}

// Opened implements driver.Gate.
func (l *liveness) Opened() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open() {
		return closed
	}
	return l.next
}

func (l *liveness) open() bool {
	return l.always || !l.trusted.IsZero() && (l.watched || l.now().Sub(l.trusted) < l.trust)
}

// startShows: some pool has enough assigned addresses for a start of
// MetalLB to show in its status.
func (l *liveness) startShows() bool {
	for _, assigned := range l.pools {
		if assigned >= restartedFrom {
			return true
		}
	}
	return false
}

// pool records a MetalLB pool's count of assigned addresses (gone: the pool
// was deleted). Once no pool could show a start, the last answer is trusted
// for the trust period only, counted from when it came. A pool that grows
// able to show one while the answer is still trusted (a driver that started
// with empty pools) makes it hold from then on, as if it had come then.
func (l *liveness) pool(name string, assigned int64, gone bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gone {
		delete(l.pools, name)
	} else {
		l.pools[name] = assigned
	}
	l.watched = l.startShows() && l.open()
}

// trustAlways keeps the gate open (Options.TrustMetalLBAlways).
func (l *liveness) trustAlways() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.always = true
	l.metrics.ready.Set(1)
}

// distrust shuts the gate until MetalLB answers in one batch again: what
// MetalLB did at `at` shows that it ignored single events then (it refused
// an address for a placeholder that no longer exists, a deletion it never
// heard of). A refusal from before MetalLB's last answer from single events
// is old news: the full pass that ended its wait after a start makes the
// refusals of the deletions it missed, and the driver reads them only once
// the gate is open, after that answer. Shutting the gate then would cost a
// full pass for nothing (docs/design.md, "MetalLB after a start"). A
// MetalLB started again since its answer refuses only later, and again at
// each of its full passes. at has a second's precision (an Event's time), so
// a refusal in the second of the answer counts as older: no MetalLB starts
// and refuses within a second.
func (l *liveness) distrust(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !at.IsZero() && !at.After(l.trusted) {
		return
	}
	l.trusted = time.Time{}
}

// ask sets the question on every probe, creating them if need be, unless a
// question is out.
func (l *liveness) ask(ctx context.Context) error {
	l.mu.Lock()
	at := l.now()
	if !l.asked.IsZero() && at.Sub(l.asked) < askAgainAfter {
		l.mu.Unlock()
		return nil
	}
	order := rand.Perm(probes)
	l.set = 1 - l.set
	set := l.set
	l.asked, l.order, l.answered = at, order, map[int]uint64{}
	l.mu.Unlock()
	stamp := at.UTC().Format(time.RFC3339Nano)
	for _, i := range order {
		if err := l.write(ctx, probeNames[set][i], stamp); err != nil {
			l.mu.Lock()
			if l.asked.Equal(at) {
				l.asked = time.Time{}
			}
			l.mu.Unlock()
			return err
		}
	}
	log.FromContext(ctx).V(1).Info("Asked MetalLB whether it handles single Service events; the driver's changes wait for the answer")
	time.AfterFunc(unansweredAfter, func() { l.overdue(at) })
	return nil
}

// overdue marks MetalLB not ready when the question asked at is still
// unanswered.
func (l *liveness) overdue(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.asked.Equal(at) {
		l.metrics.ready.Set(0)
	}
}

func (l *liveness) write(ctx context.Context, name, stamp string) error {
	probe := &corev1.Service{}
	err := l.client.Get(ctx, client.ObjectKey{Namespace: l.ns, Name: name}, probe)
	if apierrors.IsNotFound(err) {
		probe = &corev1.Service{}
		probe.Namespace, probe.Name = l.ns, name
		probe.Labels = map[string]string{params.LabelManagedBy: params.ManagedByValue}
		probe.Annotations = map[string]string{annotationAllocatedFromPool: probePool, annotationProbeAsked: stamp}
		probe.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "probe", Port: placeholder.Port, Protocol: corev1.ProtocolTCP}}}
		return l.client.Create(ctx, probe)
	}
	if err != nil {
		return err
	}
	orig := probe.DeepCopy()
	if probe.Annotations == nil {
		probe.Annotations = map[string]string{}
	}
	probe.Annotations[annotationAllocatedFromPool] = probePool
	probe.Annotations[annotationProbeAsked] = stamp
	return l.client.Patch(ctx, probe, client.MergeFrom(orig))
}

// observe reads MetalLB's answer on probe i of set (nil: the probe is
// gone).
func (l *liveness) observe(ctx context.Context, set, i int, probe *corev1.Service) error {
	l.mu.Lock()
	if l.asked.IsZero() || set != l.set {
		l.mu.Unlock()
		return nil
	}
	if probe == nil {
		l.asked = time.Time{}
		l.mu.Unlock()
		return l.ask(ctx) // someone deleted it: ask again, which recreates it
	}
	rv, err := strconv.ParseUint(probe.ResourceVersion, 10, 64)
	if err != nil || probe.Annotations[annotationAllocatedFromPool] != "" ||
		probe.Annotations[annotationProbeAsked] != l.asked.UTC().Format(time.RFC3339Nano) {
		l.mu.Unlock()
		return nil // not answered yet, or an answer to another question
	}
	if _, ok := l.answered[i]; !ok {
		l.answered[i] = rv
	}
	if len(l.answered) < probes {
		l.mu.Unlock()
		return nil
	}
	answers := slices.SortedFunc(maps.Keys(l.answered), func(x, y int) int { return cmp.Compare(l.answered[x], l.answered[y]) })
	single := slices.Equal(answers, l.order)
	took := l.now().Sub(l.asked)
	wasOpen := l.open()
	l.asked, l.answered = time.Time{}, nil
	if single {
		l.trusted = l.now()
		l.watched = l.startShows()
		close(l.next)
		l.next = make(chan struct{})
	}
	l.mu.Unlock()
	l.metrics.probes.WithLabelValues(map[bool]string{true: "single-events", false: "full-pass"}[single]).Inc()
	l.metrics.probeSeconds.Observe(took.Seconds())
	if !single {
		l.metrics.ready.Set(0)
		log.FromContext(ctx).Info("MetalLB answered the probes only in a full pass; it ignores single Service events, so the driver waits",
			"took", took.String())
		return l.ask(ctx)
	}
	l.metrics.ready.Set(1)
	if !wasOpen {
		log.FromContext(ctx).V(1).Info("MetalLB handles single Service events; the driver goes on", "took", took.String())
	}
	return nil
}

// gatedClient fails the backend's writes to Services with errCatchingUp
// while the gate is shut. Deleting or annotating a tombstone is let through:
// MetalLB has already let its address go.
type gatedClient struct {
	client.Client
	gate *liveness
}

func (c gatedClient) check(ctx context.Context, obj client.Object, create bool) error {
	if _, ok := obj.(*corev1.Service); !ok {
		return nil
	}
	if !create && obj.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone {
		return nil
	}
	return c.gate.Ready(ctx)
}

func (c gatedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.check(ctx, obj, true); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c gatedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.check(ctx, obj, false); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c gatedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.check(ctx, obj, false); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c gatedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.check(ctx, obj, false); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

// Ready implements driver.Gate.
func (b *Backend) Ready(ctx context.Context) error { return b.live.Ready(ctx) }

// Opened implements driver.Gate.
func (b *Backend) Opened() <-chan struct{} { return b.live.Opened() }

// probeReconciler reads MetalLB's answers on the probes.
type probeReconciler struct{ *Backend }

func (r *probeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set, i := probeIndex(req.Name)
	if i < 0 {
		return ctrl.Result{}, nil
	}
	probe := &corev1.Service{}
	if err := r.Get(ctx, req.NamespacedName, probe); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		probe = nil
	}
	return ctrl.Result{}, r.live.observe(ctx, set, i, probe)
}

// probeIndex finds name among the probes; i is -1 when it is none.
func probeIndex(name string) (set, i int) {
	for set := range probeNames {
		if i := slices.Index(probeNames[set][:], name); i >= 0 {
			return set, i
		}
	}
	return 0, -1
}

func (b *Backend) setupProbe(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("probe").
		For(&corev1.Service{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, i := probeIndex(o.GetName())
			return o.GetNamespace() == b.opts.PlaceholderNamespace && i >= 0
		}))).
		Complete(&probeReconciler{Backend: b})
}

// restartedBelow: a pool whose count of assigned addresses falls below this
// share of what it was, in one status write, tells of a MetalLB that started
// again (see startedAgain).
const restartedBelow = 0.25

// restartedFrom is the least count of assigned addresses whose fall is read
// as a start: in a pool with fewer, releases in a row between two of
// MetalLB's status writes could look the same.
const restartedFrom = 16

// assignedIn is a MetalLB pool's count of assigned addresses, both families.
func assignedIn(pool *unstructured.Unstructured) int64 {
	v4, _, _ := unstructured.NestedInt64(pool.Object, "status", "assignedIPv4")
	v6, _, _ := unstructured.NestedInt64(pool.Object, "status", "assignedIPv6")
	return v4 + v6
}

// startedAgain reads a MetalLB pool's status write: true when its count of
// assigned addresses fell below a quarter of what it was, from at least 16.
// MetalLB writes a pool's status from its allocator, which a new process
// fills only as its first full pass goes, and it writes every pool's status
// as it starts, before that pass: the first write after a start counts none
// or a few, against hundreds before it. Releases take addresses off a few
// at a time between two writes.
func startedAgain(old, new *unstructured.Unstructured) bool {
	before, after := assignedIn(old), assignedIn(new)
	return before >= restartedFrom && float64(after) < restartedBelow*float64(before)
}

// setupStarts shuts the gate when a pool's status tells of a MetalLB that
// started again, and keeps each pool's count for the gate (see
// liveness.pool). Without it the driver would trust MetalLB's last answer
// until a refusal naming a phantom or the end of the trust period: in the
// 600-claim chaos run of 2026-12-02 16:21 the driver went on writing for
// 66 s after MetalLB's last start, its pins and new holds made MetalLB's
// next three full passes ask for another, and MetalLB took five passes
// (2 min 56 s) instead of two to handle single events again.
func (b *Backend) setupStarts(mgr ctrl.Manager) error {
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	ns := b.opts.MetalLBNamespace
	return ctrl.NewControllerManagedBy(mgr).Named("metallb-start").
		WatchesRawSource(source.Kind(mgr.GetCache(), pool, handler.TypedFuncs[*unstructured.Unstructured, reconcile.Request]{
			CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*unstructured.Unstructured], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if e.Object.GetNamespace() == ns {
					b.live.pool(e.Object.GetName(), assignedIn(e.Object), false)
				}
			},
			UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*unstructured.Unstructured], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if e.ObjectNew.GetNamespace() != ns {
					return
				}
				if startedAgain(e.ObjectOld, e.ObjectNew) {
					b.live.distrust(time.Time{})
					log.FromContext(ctx).Info("MetalLB's count of the addresses it assigned from a pool fell at once: it started again, and ignores single Service events until a full pass succeeds; the driver waits",
						"pool", e.ObjectNew.GetName(), "before", assignedIn(e.ObjectOld), "after", assignedIn(e.ObjectNew))
				}
				b.live.pool(e.ObjectNew.GetName(), assignedIn(e.ObjectNew), false)
			},
			DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*unstructured.Unstructured], _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if e.Object.GetNamespace() == ns {
					b.live.pool(e.Object.GetName(), 0, true)
				}
			},
		})).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
}
