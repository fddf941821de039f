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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

var (
	backendMetrics  *metrics
	registerBackend sync.Once
)

// metrics are the MetalLB backend's series.
type metrics struct {
	placeholders *prometheus.GaugeVec
	holdsCreated prometheus.Counter
	tombstones   prometheus.Counter
	retries      prometheus.Counter
	yields       *prometheus.CounterVec
	contested    *prometheus.CounterVec
}

func newMetrics() *metrics {
	registerBackend.Do(func() {
		backendMetrics = &metrics{
			placeholders: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "metallb_iad_placeholders", Help: "Placeholder Services by role (allocation, hold).",
			}, []string{"role"}),
			holdsCreated: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "metallb_iad_holds_created_total", Help: "Hold placeholders created (after a handoff back, or out-of-band deletion).",
			}),
			tombstones: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "metallb_iad_tombstones_total",
				Help: "Tombstones made so that MetalLB lets go of an address it still counts for a placeholder that no longer exists.",
			}),
			retries: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "metallb_iad_retries_total", Help: "Pinned Services MetalLB was asked to process again after what blocked their address let go.",
			}),
			yields: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "metallb_iad_yields_total", Help: "Addresses recorded in the ledger that MetalLB offered to an allocation placeholder, and the driver gave back, by class.",
			}, []string{"class"}),
			contested: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "metallb_iad_contested_total", Help: "Warnings that MetalLB keeps offering one recorded address to allocation placeholders, by class.",
			}, []string{"class"}),
		}
		ctrlmetrics.Registry.MustRegister(backendMetrics.placeholders, backendMetrics.holdsCreated, backendMetrics.tombstones, backendMetrics.retries,
			backendMetrics.yields, backendMetrics.contested)
	})
	backendMetrics.placeholders.Reset()
	for _, role := range []string{v1alpha1.PlaceholderAllocation, v1alpha1.PlaceholderHold} {
		backendMetrics.placeholders.WithLabelValues(role).Set(0)
	}
	return backendMetrics
}

func (m *metrics) placeholder(role string, delta float64) {
	if role != "" {
		m.placeholders.WithLabelValues(role).Add(delta)
	}
}
