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
	"math"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/wire"
)

// The wire scenario's names and range (inside wire.LoadBalancerRange).
const (
	wireNS        = "bench-wire"
	wireClass     = "bench-wire"
	wireClaim     = "web"
	wireRange     = "198.51.100.240/29"
	wireInterval  = 10 * time.Millisecond // 100 Hz
	wireSteady    = 300 * time.Millisecond
	wireStepLimit = time.Minute
)

// Wire is what the wire scenario measured: the time from a Service's
// creation to the client's first answer on its claimed address, and the
// outage of each rebuild (Service deleted, another created naming the same
// claim), as a client probing at 100 Hz saw them.
type Wire struct {
	// Skipped says why the scenario did not run (it needs root, and
	// MetalLB).
	Skipped  string `json:"skipped,omitempty"`
	Rebuilds int    `json:"rebuilds"`
	// FirstAnswerMs holds one sample per Service created (rebuilds + 1).
	FirstAnswerMs Percentiles `json:"firstAnswerMs"`
	// OutageMs and FailedProbes hold one sample per rebuild.
	OutageMs      Percentiles `json:"outageMs"`
	FailedProbes  Percentiles `json:"failedProbes"`
	ProbesPerSec  float64     `json:"probesPerSecond"`
	Unrecovered   int         `json:"unrecovered"`
	Error         string      `json:"error,omitempty"`
	ScenarioWallS float64     `json:"wallSeconds"`
}

// Percentiles summarise samples, nearest rank.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func percentiles(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := func(q float64) float64 { return s[min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)] }
	return Percentiles{N: len(s), P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: s[len(s)-1]}
}

// wireScenario runs the rebuild loop on a wire test bed with one node.
func (e *env) wireScenario(ctx context.Context, rebuilds int) *Wire {
	res := &Wire{Rebuilds: rebuilds}
	if !e.backend.wire {
		res.Skipped = fmt.Sprintf("the test bed announces addresses with MetalLB's speaker, which does not run beside %s",
			e.backend.title)
		e.cfg.logf("Wire: skipped: %s", res.Skipped)
		return res
	}
	if err := wire.CheckRequirements(); err != nil {
		res.Skipped = err.Error()
		e.cfg.logf("Wire: skipped: %v", err)
		return res
	}
	start := time.Now()
	if err := e.runWire(ctx, res); err != nil {
		res.Error = err.Error()
		e.cfg.logf("Wire: %v", err)
	}
	res.ScenarioWallS = time.Since(start).Seconds()
	return res
}

func (e *env) runWire(ctx context.Context, res *Wire) error {
	e.cfg.logf("Wire: building the test bed")
	bed, err := wire.Start(ctx, wire.Options{Cluster: e.cluster, Nodes: []wire.NodeOptions{{Name: "bench-wire-a"}}, Log: e.cfg.Log})
	if err != nil {
		return err
	}
	defer func() { _ = bed.Close() }()
	// Two backends, so that each rebuild's first answer is told apart from
	// the previous Service's by its body.
	var backends [2]*wire.Backend
	for i := range backends {
		if backends[i], err = bed.StartBackend(fmt.Sprintf("web-%d", i), bed.Nodes[0]); err != nil {
			return err
		}
	}
	if err := e.namespace(ctx, wireNS); err != nil {
		return err
	}
	class := b.Class(wireClass, v1alpha1.ProvisionerMetalLB, b.Parameters(fmt.Sprintf(`{"addresses": [%q]}`, wireRange)))
	claim := b.Claim(wireNS, wireClaim, b.OfClass(wireClass))
	for _, o := range []client.Object{class, claim} {
		if err := e.c.Create(ctx, o); err != nil {
			return err
		}
	}
	x, err := e.boundAddress(ctx)
	if err != nil {
		return err
	}
	e.cfg.logf("Wire: claim Bound to %s; %d rebuilds follow", x, res.Rebuilds)

	var firsts, outages, failed []float64
	var probes, probeSeconds float64
	prev := ""
	for i := 0; i <= res.Rebuilds; i++ {
		name, backend := fmt.Sprintf("svc-%03d", i), backends[i%2]
		var deleted time.Time
		var mu sync.Mutex
		created := time.Time{}
		series := make(chan []wire.Probe, 1)
		go func() {
			series <- bed.ProbeSeries(ctx, x, wire.ProbeOptions{Interval: wireInterval, Duration: wireStepLimit,
				Until: func(ps []wire.Probe) bool {
					mu.Lock()
					c := created
					mu.Unlock()
					return !c.IsZero() && steadyFrom(ps, backend.Name, c, wireSteady)
				}})
		}()
		// Let the client see the previous Service answer before it goes.
		time.Sleep(50 * time.Millisecond)
		if prev != "" {
			deleted = time.Now()
			if err := e.c.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: prev, Namespace: wireNS}}); err != nil {
				return err
			}
			if err := bed.DeleteEndpoints(ctx, wireNS, prev); err != nil {
				return err
			}
		}
		if err := bed.WriteEndpoints(ctx, wireNS, name, backend.Endpoint(true)); err != nil {
			return err
		}
		svc := b.Service(wireNS, name, b.ForClaim(wireClaim))
		mu.Lock()
		created = time.Now()
		mu.Unlock()
		if err := e.c.Create(ctx, svc); err != nil {
			return err
		}
		ps := <-series
		first, ok := firstAnswerBy(ps, backend.Name, created)
		if !ok {
			return fmt.Errorf("service %s got no answer on %s within %s", name, x, wireStepLimit)
		}
		firsts = append(firsts, ms(first.At.Add(first.Took).Sub(created)))
		if prev != "" {
			o := wire.OutageAfter(ps, deleted)
			if !o.Recovered {
				res.Unrecovered++
			}
			outages = append(outages, ms(o.Duration))
			failed = append(failed, float64(o.Failed))
		}
		probes += float64(len(ps) - 1)
		probeSeconds += ps[len(ps)-1].At.Sub(ps[0].At).Seconds()
		prev = name
		if i%10 == 0 {
			e.cfg.logf("Wire: %d of %d rebuilds", i, res.Rebuilds)
		}
	}
	res.FirstAnswerMs, res.OutageMs, res.FailedProbes = percentiles(firsts), percentiles(outages), percentiles(failed)
	if probeSeconds > 0 {
		res.ProbesPerSec = probes / probeSeconds
	}
	return nil
}

// boundAddress waits, bounded, for the wire claim's address.
func (e *env) boundAddress(ctx context.Context) (netip.Addr, error) {
	deadline := time.Now().Add(wireStepLimit)
	for time.Now().Before(deadline) {
		c := &v1alpha1.IPAddressClaim{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: wireNS, Name: wireClaim}, c); err != nil {
			return netip.Addr{}, err
		}
		if c.Status.Phase == v1alpha1.ClaimBound && len(c.Status.Addresses) > 0 {
			return netip.ParseAddr(c.Status.Addresses[0].Address)
		}
		select {
		case <-ctx.Done():
			return netip.Addr{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return netip.Addr{}, fmt.Errorf("claim %s/%s not Bound within %s", wireNS, wireClaim, wireStepLimit)
}

// firstAnswerBy is the first probe started after from that backend answered.
func firstAnswerBy(ps []wire.Probe, backend string, from time.Time) (wire.Probe, bool) {
	for _, p := range ps {
		if !p.At.Before(from) && p.OK() && p.Body == backend {
			return p, true
		}
	}
	return wire.Probe{}, false
}

// steadyFrom reports whether backend answered every probe of the last d,
// after from.
func steadyFrom(ps []wire.Probe, backend string, from time.Time, d time.Duration) bool {
	if len(ps) == 0 {
		return false
	}
	last := ps[len(ps)-1]
	for _, p := range slices.Backward(ps) {
		if p.At.Before(from) || !p.OK() || p.Body != backend {
			return false
		}
		if last.At.Sub(p.At) >= d {
			return true
		}
	}
	return false
}
