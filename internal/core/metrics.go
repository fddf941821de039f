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

package core

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

var (
	addressesByPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "address_controller_ipaddresses",
		Help: "IPAddress objects by class and phase (phase None: not processed yet).",
	}, []string{"class", "phase"})
	claimsByPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "address_controller_ipaddressclaims",
		Help: "IPAddressClaim objects by phase (phase None: not processed yet).",
	}, []string{"phase"})
	claimBindSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "address_controller_claim_bind_duration_seconds",
		Help:    "Time from a claim's creation to its first Bound status.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 18),
	})
	registerMetrics sync.Once
)

// metrics keeps the gauges in step with the informers: each event moves one
// object from its old (class, phase) to its new one, so nothing is listed.
type metrics struct{}

func newMetrics() *metrics {
	registerMetrics.Do(func() {
		ctrlmetrics.Registry.MustRegister(addressesByPhase, claimsByPhase, claimBindSeconds)
	})
	// A manager restarted in the same process (tests) starts counting anew.
	addressesByPhase.Reset()
	claimsByPhase.Reset()
	return &metrics{}
}

func phaseLabel(p string) string {
	if p == "" {
		return "None"
	}
	return p
}

func (m *metrics) observeAddress(old, new *v1alpha1.IPAddress) {
	if old != nil {
		addressesByPhase.WithLabelValues(old.Spec.ClassName, phaseLabel(string(old.Status.Phase))).Dec()
	}
	if new != nil {
		addressesByPhase.WithLabelValues(new.Spec.ClassName, phaseLabel(string(new.Status.Phase))).Inc()
	}
}

func (m *metrics) observeClaim(old, new *v1alpha1.IPAddressClaim) {
	if old != nil {
		claimsByPhase.WithLabelValues(phaseLabel(string(old.Status.Phase))).Dec()
	}
	if new != nil {
		claimsByPhase.WithLabelValues(phaseLabel(string(new.Status.Phase))).Inc()
	}
}

func (m *metrics) observeBind(d time.Duration) {
	claimBindSeconds.Observe(d.Seconds())
}
