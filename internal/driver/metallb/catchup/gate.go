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

package catchup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// ProbePrefix begins the probes' names.
const ProbePrefix = "metallb-iad-probe-"

// The probes: headless ClusterIP Services in the placeholder namespace, in
// two sets asked in turn (see State.lastSet).
var probeNames = [2][Probes]string{
	{ProbePrefix + "a0", ProbePrefix + "a1", ProbePrefix + "a2", ProbePrefix + "a3", ProbePrefix + "a4"},
	{ProbePrefix + "b0", ProbePrefix + "b1", ProbePrefix + "b2", ProbePrefix + "b3", ProbePrefix + "b4"},
}

const (
	// AnnotationAllocatedFromPool is MetalLB's record, on a Service it gave
	// an address, of the pool the address came from. MetalLB removes it when
	// it handles a Service that is not a LoadBalancer: the probes' question.
	AnnotationAllocatedFromPool = "metallb.io/ip-allocated-from-pool"
)

// DefaultTrust is State.Trust unless set.
const DefaultTrust = 5 * time.Minute

// errCatchingUp is what a write fails with while the gate is shut.
var errCatchingUp = fmt.Errorf("%w: MetalLB is not handling single Service events (after a start it ignores them until one full pass over every Service succeeds); the driver changes no Service until it does",
	driver.ErrNotReady)

// Gate is the MetalLB backend's driver.Gate: the catch-up machine (Step)
// fed by the driver's watches, and the writes its actions ask for.
type Gate struct {
	client client.Client // not gated
	ns     string
	now    func() time.Time

	mu     sync.Mutex
	state  State
	next   chan struct{} // closed when the gate next opens
	always bool          // the gate never shuts (tests)
}

// New returns a shut gate that writes its probes in namespace ns; trust 0
// means DefaultTrust.
func New(c client.Client, ns string, trust time.Duration) *Gate {
	if trust <= 0 {
		trust = DefaultTrust
	}
	registerMetrics.Do(func() {
		ctrlmetrics.Registry.MustRegister(metricReady, metricAnswers, metricAnswerSeconds, metricShut, metricMadeWhileShut)
	})
	metricReady.Set(0) // until the driver hears from MetalLB
	return &Gate{client: c, ns: ns, now: time.Now, state: State{Trust: trust}, next: make(chan struct{})}
}

// TrustAlways keeps the gate open whatever the driver sees: tests set it to
// act out what a driver does in the moments before it notices that MetalLB
// stopped.
func (g *Gate) TrustAlways() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.always = true
	metricReady.Set(1)
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Ready implements driver.Gate: while the gate is shut, it asks MetalLB
// (unless a question is out) and fails.
func (g *Gate) Ready(ctx context.Context) error {
	g.mu.Lock()
	open := g.always || g.state.Open(g.now())
	g.mu.Unlock()
	if open {
		return nil
	}
	if err := g.Feed(ctx, Event{Kind: Write}); err != nil {
		return err
	}
	return errCatchingUp
}

// Opened implements driver.Gate.
func (g *Gate) Opened() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.always || g.state.Open(g.now()) {
		return closed
	}
	return g.next
}

// Refused tells the gate of a refusal MetalLB made at at for a placeholder
// that no longer exists.
func (g *Gate) Refused(ctx context.Context, at time.Time) {
	_ = g.Feed(ctx, Event{Kind: Refused, At: at})
}

// Feed steps the machine and carries out its actions; it fails only when
// writing a question does.
func (g *Gate) Feed(ctx context.Context, e Event) error {
	e.Now = g.now().Round(0) // Round(0): compared with stamps read back
	g.mu.Lock()
	var a Actions
	g.state, a = Step(g.state, e)
	if a.Opened {
		close(g.next)
		g.next = make(chan struct{})
	}
	g.mu.Unlock()

	if a.Ready != nil {
		metricReady.Set(map[bool]float64{true: 1, false: 0}[*a.Ready])
	}
	if a.Answer != "" {
		metricAnswers.WithLabelValues(a.Answer).Inc()
		metricAnswerSeconds.Observe(a.Took.Seconds())
		log.FromContext(ctx).V(1).Info("MetalLB answered the probes", "answer", a.Answer, "took", a.Took.String())
	}
	if a.Why != "" {
		signal := map[Kind]string{Started: "pod", Pool: "pool", Refused: "refusal"}[e.Kind]
		metricShut.WithLabelValues(signal).Inc()
		log.FromContext(ctx).Info(a.Why+"; the driver changes no Service until MetalLB answers its probes from single events", "signal", signal)
	}
	if a.Ask == nil {
		return nil
	}
	time.AfterFunc(Patience, func() { _ = g.Feed(ctx, Event{Kind: Overdue, At: a.Ask.At}) })
	written, err := g.ask(ctx, a.Ask)
	if err != nil {
		_ = g.Feed(ctx, Event{Kind: AskFailed, At: a.Ask.At})
		return err
	}
	return g.Feed(ctx, Event{Kind: Asked, At: a.Ask.At, Written: written})
}

// ask writes question q on its probes, all at once, creating them if need
// be, and returns the revision each was written at.
func (g *Gate) ask(ctx context.Context, q *Question) ([Probes]uint64, error) {
	stamp := q.At.UTC().Format(time.RFC3339Nano)
	var written [Probes]uint64
	errs := make([]error, Probes)
	var wg sync.WaitGroup
	for i := range Probes {
		wg.Go(func() {
			probe := &corev1.Service{}
			probe.Namespace, probe.Name = g.ns, probeNames[q.Set][i]
			if _, errs[i] = controllerutil.CreateOrPatch(ctx, g.client, probe, func() error {
				probe.Labels = map[string]string{v1alpha1.LabelManagedBy: params.ManagedByValue}
				probe.Annotations = map[string]string{AnnotationAllocatedFromPool: "probe", v1alpha1.AnnotationProbeAsked: stamp}
				if probe.CreationTimestamp.IsZero() {
					probe.Spec.Type, probe.Spec.ClusterIP = corev1.ServiceTypeClusterIP, corev1.ClusterIPNone
					probe.Spec.Ports = []corev1.ServicePort{{Name: "probe", Port: placeholder.Port, Protocol: corev1.ProtocolTCP}}
				}
				return nil
			}); errs[i] == nil {
				written[i], errs[i] = strconv.ParseUint(probe.ResourceVersion, 10, 64)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return written, err
	}
	log.FromContext(ctx).V(1).Info("Asked MetalLB whether it handles single Service events; the driver's changes wait for the answer")
	return written, nil
}

// Client fails c's writes to Services with an error wrapping
// driver.ErrNotReady while the gate is shut. Deleting or annotating a
// tombstone is let through: MetalLB has already let its address go. So is
// creating an allocation placeholder or a hold in the gate's namespace, and
// that fails only once the Service is made: a new Service fails no full
// pass (a pass writes only what it listed), and MetalLB ignores single
// events only until a pass succeeds, which lists every Service made before
// it, while the events that come during that pass are handled after it. So
// the next pass assigns it, and the failure parks the pass that made it
// until the gate opens.
func (g *Gate) Client(c client.Client) client.Client { return gatedClient{Client: c, gate: g} }

type gatedClient struct {
	client.Client
	gate *Gate
}

func (c gatedClient) check(ctx context.Context, obj client.Object, create bool) error {
	if _, ok := obj.(*corev1.Service); !ok ||
		!create && obj.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone {
		return nil
	}
	return c.gate.Ready(ctx)
}

func (c gatedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.check(ctx, obj, true)
	role := obj.GetLabels()[v1alpha1.LabelPlaceholder]
	if errors.Is(err, driver.ErrNotReady) && obj.GetNamespace() == c.gate.ns &&
		(role == v1alpha1.PlaceholderAllocation || role == v1alpha1.PlaceholderHold) {
		if cerr := c.Client.Create(ctx, obj, opts...); cerr != nil {
			return cerr
		}
		metricMadeWhileShut.WithLabelValues(role).Inc()
		return err
	}
	if err != nil {
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

var (
	registerMetrics sync.Once
	metricReady     = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "metallb_iad_metallb_ready",
		Help: "1 when MetalLB last answered the driver's probes from their own events, 0 when only a full pass did or a question went unanswered for a minute (it ignores single Service events, or is down); the driver changes no Service at 0.",
	})
	metricAnswers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metallb_iad_probes_total", Help: "MetalLB's answers to the driver's probes, by how they came (single-events: in the order written; full-pass: in another; early: begun before the question was all written, which tells nothing).",
	}, []string{"answer"})
	metricAnswerSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "metallb_iad_probe_seconds", Help: "How long MetalLB took to answer the driver's probes.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300},
	})
	metricMadeWhileShut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metallb_iad_placeholders_made_while_catching_up_total",
		Help: "Placeholders the driver created while MetalLB ignored single Service events, by role (allocation, hold): MetalLB's next full pass assigns them, and the rest of the driver's work on them waits for the gate.",
	}, []string{"role"})
	metricShut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "metallb_iad_metallb_starts_total",
		Help: "Starts of MetalLB the driver saw, which shut its gate until MetalLB answers from single events, by signal (pod: its controller's Pod; pool: a pool's count of assigned addresses falling at once; refusal: a refusal naming a deleted placeholder, where neither could show a start).",
	}, []string{"signal"})
)
