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

package controllers

import (
	"context"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// classLabel names the class a per-class series is about.
const classLabel = "class"

var (
	driverMetrics     *metrics
	registerDriverMet sync.Once
)

// metrics are the driver's Prometheus series.
type metrics struct {
	provisioned *prometheus.CounterVec
	handoffs    *prometheus.CounterVec
	handoffTime prometheus.Histogram
	unheld      prometheus.Histogram
	conflicts   *prometheus.CounterVec
	capacity    *prometheus.GaugeVec
	used        *prometheus.GaugeVec
	mismatches  *prometheus.CounterVec
	// inMismatch counts, by class, the claims whose last provisioning pass
	// found the ledger contradicting the backend, from mismatched.
	inMismatch *prometheus.GaugeVec
	mismatched mismatchedClaims
	// gone are the classes deleted since the manager started: an address
	// event trailing its class's deletion must not bring its series back.
	gone sync.Map
}

// perClass are the series that carry a class label.
func (m *metrics) perClass() []*prometheus.MetricVec {
	return []*prometheus.MetricVec{m.provisioned.MetricVec, m.handoffs.MetricVec, m.conflicts.MetricVec,
		m.capacity.MetricVec, m.used.MetricVec, m.mismatches.MetricVec, m.inMismatch.MetricVec}
}

// classRendered starts a served class's counters at zero, so that a first
// conflict or mismatch shows in increase() and a dashboard lists the class.
func (m *metrics) classRendered(class string) {
	m.gone.Delete(class)
	m.provisioned.WithLabelValues(class)
	for _, mode := range []string{modeShared, modeGap} {
		for _, direction := range []string{"associate", "dissociate"} {
			m.handoffs.WithLabelValues(class, mode, direction)
		}
	}
	m.conflicts.WithLabelValues(class)
	m.mismatches.WithLabelValues(class)
	m.inMismatch.WithLabelValues(class).Set(float64(m.mismatched.count(class)))
	m.used.WithLabelValues(class)
}

// classGone deletes a deleted class's series. A class goes only once none
// of its addresses is left.
func (m *metrics) classGone(class string) {
	m.gone.Store(class, struct{}{})
	m.mismatched.forgetClass(class)
	for _, v := range m.perClass() {
		v.DeletePartialMatch(prometheus.Labels{classLabel: class})
	}
}

// countAddresses keeps address_driver_pool_used in step with the IPAddress
// informer, object by object, instead of counting a class on every pass.
func (m *metrics) countAddresses(ctx context.Context, mgr ctrl.Manager) error {
	m.used.Reset()
	m.mismatched.reset()
	m.inMismatch.Reset()
	count := func(a *v1alpha1.IPAddress, delta float64) {
		if _, gone := m.gone.Load(a.Spec.ClassName); !gone || delta > 0 {
			m.used.WithLabelValues(a.Spec.ClassName).Add(delta)
		}
	}
	if err := manager.Observe(ctx, mgr, manager.Events[*v1alpha1.IPAddress]{
		Add:    func(a *v1alpha1.IPAddress) { count(a, 1) },
		Delete: func(a *v1alpha1.IPAddress) { count(a, -1) },
	}); err != nil {
		return err
	}
	return manager.Observe(ctx, mgr, manager.Events[*v1alpha1.IPAddressClass]{
		Delete: func(c *v1alpha1.IPAddressClass) { m.classGone(c.Name) },
	})
}

// newMetrics returns the process's driver metrics, registered once with the
// manager's registry.
func newMetrics() *metrics {
	registerDriverMet.Do(func() {
		driverMetrics = newMetricSet()
		m := driverMetrics
		ctrlmetrics.Registry.MustRegister(m.provisioned, m.handoffs, m.handoffTime, m.unheld, m.conflicts, m.capacity, m.used, m.mismatches,
			m.inMismatch)
	})
	return driverMetrics
}

// newMetricSet makes the driver's series, unregistered.
func newMetricSet() *metrics {
	m := &metrics{
		provisioned: classCounter("address_driver_provisioned_total", "Addresses the driver provisioned, by class."),
		handoffs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "address_driver_handoffs_total",
			Help: "Handoffs of a claim's addresses between their hold and a Service, by class, mode (shared, gap) and direction (associate, dissociate).",
		}, []string{classLabel, "mode", "direction"}),
		unheld: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "address_driver_unheld_seconds",
			Help:    "For every handoff, how long no Service reported the address, that is how long the backend counted it free (0 for a shared handoff).",
			Buckets: append([]float64{0}, prometheus.ExponentialBuckets(0.005, 2, 16)...),
		}),
		handoffTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "address_driver_handoff_duration_seconds", Help: "From recording an association to the Service's load balancer reporting the address.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}),
		conflicts: classCounter("address_driver_conflicts_total", "Addresses found held by a Service not entitled to them, by class."),
		capacity:  classGauge("address_driver_pool_capacity", "Addresses a class's ranges offer."),
		used:      classGauge("address_driver_pool_used", "IPAddress objects of a class, in any phase."),
		mismatches: classCounter("address_driver_ledger_mismatches_total",
			"Addresses the backend reserved for a claim while their IPAddress already belonged to someone else, by class."),
		inMismatch: classGauge("address_driver_claims_in_ledger_mismatch",
			"Claims of a class whose last provisioning pass found the backend's reservation already recorded for someone else; 0 once their next pass agrees."),
	}
	m.mismatched.reset()
	return m
}

// classCounter is a counter with one series per class.
func classCounter(name, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{classLabel})
}

// classGauge is a gauge with one series per class.
func classGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{classLabel})
}

// mismatchedClaims are the claims, by key, whose last provisioning pass met
// a ledger mismatch, with their class. A mismatch is a state, not an event:
// it lasts until an admin reconciles the two sides and the claim's next pass
// records its address.
type mismatchedClaims struct {
	mu      sync.Mutex
	byClaim map[string]string
}

func (s *mismatchedClaims) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byClaim = map[string]string{}
}

// set records whether the claim's pass met a mismatch and returns the
// classes whose count changed.
func (s *mismatchedClaims) set(claim, class string, mismatched bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.byClaim[claim]
	switch {
	case mismatched && (!had || old != class):
		if s.byClaim == nil {
			s.byClaim = map[string]string{}
		}
		s.byClaim[claim] = class
		if had {
			return []string{old, class}
		}
		return []string{class}
	case !mismatched && had:
		delete(s.byClaim, claim)
		return []string{old}
	}
	return nil
}

func (s *mismatchedClaims) count(class string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.byClaim {
		if c == class {
			n++
		}
	}
	return n
}

func (s *mismatchedClaims) forgetClass(class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.byClaim, func(_, c string) bool { return c == class })
}

// ledgerState records the outcome of a claim's provisioning pass for the
// claims_in_ledger_mismatch gauge; class is "" when the claim no longer
// wants provisioning (bound, deleted, not this driver's).
func (m *metrics) ledgerState(claim, class string, mismatched bool) {
	for _, c := range m.mismatched.set(claim, class, mismatched) {
		if _, gone := m.gone.Load(c); !gone {
			m.inMismatch.WithLabelValues(c).Set(float64(m.mismatched.count(c)))
		}
	}
}
