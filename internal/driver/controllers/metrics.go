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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"

	"github.com/cozystack/address-controller/internal/tombstone"
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
	inf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddress{})
	if err != nil {
		return err
	}
	count := func(obj any, delta float64) {
		if a, ok := tombstone.As[*v1alpha1.IPAddress](obj); ok {
			if _, gone := m.gone.Load(a.Spec.ClassName); !gone || delta > 0 {
				m.used.WithLabelValues(a.Spec.ClassName).Add(delta)
			}
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { count(obj, 1) },
		DeleteFunc: func(obj any) { count(obj, -1) },
	})
	if err != nil {
		return err
	}
	classes, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClass{})
	if err != nil {
		return err
	}
	_, err = classes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if c, ok := tombstone.As[*v1alpha1.IPAddressClass](obj); ok {
				m.classGone(c.Name)
			}
		},
	})
	return err
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
		provisioned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "address_driver_provisioned_total", Help: "Addresses the driver provisioned, by class.",
		}, []string{classLabel}),
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
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "address_driver_conflicts_total", Help: "Addresses found held by a Service not entitled to them, by class.",
		}, []string{classLabel}),
		capacity: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "address_driver_pool_capacity", Help: "Addresses a class's ranges offer.",
		}, []string{classLabel}),
		used: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "address_driver_pool_used", Help: "IPAddress objects of a class, in any phase.",
		}, []string{classLabel}),
		mismatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "address_driver_ledger_mismatches_total",
			Help: "Addresses the backend reserved for a claim while their IPAddress already belonged to someone else, by class.",
		}, []string{classLabel}),
		inMismatch: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "address_driver_claims_in_ledger_mismatch",
			Help: "Claims of a class whose last provisioning pass found the backend's reservation already recorded for someone else; 0 once their next pass agrees.",
		}, []string{classLabel}),
	}
	m.mismatched.reset()
	return m
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
	for claim, c := range s.byClaim {
		if c == class {
			delete(s.byClaim, claim)
		}
	}
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
