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

package driver

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

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
}

// countAddresses keeps address_driver_pool_used in step with the IPAddress
// informer, object by object, instead of counting a class on every pass.
func (m *metrics) countAddresses(ctx context.Context, mgr ctrl.Manager) error {
	m.used.Reset()
	inf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddress{})
	if err != nil {
		return err
	}
	count := func(obj any, delta float64) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if a, ok := obj.(*v1alpha1.IPAddress); ok {
			m.used.WithLabelValues(a.Spec.ClassName).Add(delta)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { count(obj, 1) },
		DeleteFunc: func(obj any) { count(obj, -1) },
	})
	return err
}

func newMetrics() *metrics {
	registerDriverMet.Do(func() {
		driverMetrics = &metrics{
			provisioned: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "address_driver_provisioned_total", Help: "Addresses the driver provisioned, by class.",
			}, []string{"class"}),
			handoffs: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "address_driver_handoffs_total",
				Help: "Handoffs of a claim's addresses between their hold and a Service, by class, mode (shared, gap) and direction (associate, dissociate).",
			}, []string{"class", "mode", "direction"}),
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
			}, []string{"class"}),
			capacity: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "address_driver_pool_capacity", Help: "Addresses a class's ranges offer.",
			}, []string{"class"}),
			used: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "address_driver_pool_used", Help: "IPAddress objects of a class, in any phase.",
			}, []string{"class"}),
		}
		m := driverMetrics
		ctrlmetrics.Registry.MustRegister(m.provisioned, m.handoffs, m.handoffTime, m.unheld, m.conflicts, m.capacity, m.used)
	})
	return driverMetrics
}
