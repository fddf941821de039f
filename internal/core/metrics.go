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
	// waiting holds the claims the oldest-unbound gauge reads at scrape time.
	waiting            = &waitingClaims{}
	oldestWaitingClaim = &waitingCollector{
		desc: prometheus.NewDesc("address_controller_oldest_unbound_claim_age_seconds",
			"Age of the oldest IPAddressClaim that is not Bound yet (Pending, or not processed yet), by namespace and "+
				"the reason it waits; no series while none waits.",
			[]string{"namespace", "reason"}, nil),
		waiting: waiting,
	}
)

// metrics keeps the gauges in step with the informers: each event moves one
// object from its old (class, phase) to its new one, so nothing is listed.
type metrics struct{}

func newMetrics(now func() time.Time) *metrics {
	registerMetrics.Do(func() {
		ctrlmetrics.Registry.MustRegister(addressesByPhase, claimsByPhase, claimBindSeconds, oldestWaitingClaim)
	})
	// A manager restarted in the same process (tests) starts counting anew.
	addressesByPhase.Reset()
	claimsByPhase.Reset()
	waiting.reset(now)
	return &metrics{}
}

func phaseLabel(p string) string {
	if p == "" {
		return "None"
	}
	return p
}

func (m *metrics) observeAddress(old, new *v1alpha1.IPAddress) {
	// An address event that trails its class's deletion must not bring the
	// class's series back, at -1.
	if old != nil && !goneClasses.has(old.Spec.ClassName) {
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
	switch {
	case new == nil:
		waiting.forget(old.UID)
	case new.Status.Phase == "" || new.Status.Phase == v1alpha1.ClaimPending:
		waiting.remember(new.UID, waitingClaim{created: new.CreationTimestamp.Time, namespace: new.Namespace, reason: waitReason(new)})
	default:
		waiting.forget(new.UID)
	}
}

// observeClassGone deletes a deleted class's series: a class goes only once
// none of its addresses is left, so they would read 0 forever.
func (m *metrics) observeClassGone(name string) {
	goneClasses.add(name)
	addressesByPhase.DeletePartialMatch(prometheus.Labels{"class": name})
}

// observeClassBack notes that a class exists (again, if it was deleted and
// created anew under the same name).
func (m *metrics) observeClassBack(name string) {
	goneClasses.remove(name)
}

func (m *metrics) observeBind(d time.Duration) {
	claimBindSeconds.Observe(d.Seconds())
}
