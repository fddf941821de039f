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
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// Labels of the per-namespace gauges.
const (
	labelClass     = "class"
	labelNamespace = "namespace"
)

// Per-namespace use of each class, for dashboards and for alerts on tenants
// nearing their limit.
var (
	classAddressesHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "address_controller_class_addresses_held",
		Help: "Addresses bound to the claims of a namespace, by class.",
	}, []string{labelClass, labelNamespace})
	classAddressesAdmitted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "address_controller_class_addresses_admitted",
		Help: "Addresses admitted to a namespace under a class's addressesPerNamespace (its IPAddressClassUsage), by class.",
	}, []string{labelClass, labelNamespace})
	classAddressesPerNamespace = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "address_controller_class_addresses_per_namespace",
		Help: "A class's spec.addressesPerNamespace; absent for classes without a limit.",
	}, []string{labelClass})
	registerAccessMetrics sync.Once
)

func resetAccessMetrics() {
	registerAccessMetrics.Do(func() {
		ctrlmetrics.Registry.MustRegister(classAddressesHeld, classAddressesAdmitted, classAddressesPerNamespace)
	})
	classAddressesHeld.Reset()
	classAddressesAdmitted.Reset()
	classAddressesPerNamespace.Reset()
}

// observeClaimUse moves a claim's bound addresses from its old to its new
// (class, namespace).
func (m *metrics) observeClaimUse(old, new *v1alpha1.IPAddressClaim) {
	if old != nil && len(old.Status.Addresses) > 0 {
		classAddressesHeld.WithLabelValues(old.Status.ClassName, old.Namespace).Sub(float64(len(old.Status.Addresses)))
	}
	if new != nil && len(new.Status.Addresses) > 0 {
		classAddressesHeld.WithLabelValues(new.Status.ClassName, new.Namespace).Add(float64(len(new.Status.Addresses)))
	}
}

func (m *metrics) observeLedger(l *v1alpha1.IPAddressClassUsage, deleted bool) {
	if deleted {
		classAddressesAdmitted.DeleteLabelValues(l.Name, l.Namespace)
		return
	}
	classAddressesAdmitted.WithLabelValues(l.Name, l.Namespace).Set(float64(ledgerSum(l.Spec.Claims)))
}

func (m *metrics) observeClass(c *v1alpha1.IPAddressClass, deleted bool) {
	if deleted || c.Spec.AddressesPerNamespace == nil {
		classAddressesPerNamespace.DeleteLabelValues(c.Name)
		return
	}
	classAddressesPerNamespace.WithLabelValues(c.Name).Set(float64(*c.Spec.AddressesPerNamespace))
}

// observeAccessInformers feeds the per-namespace gauges from the informers,
// event by event.
func observeAccessInformers(ctx context.Context, mgr ctrl.Manager, m *metrics) error {
	resetAccessMetrics()
	if err := manager.Observe(ctx, mgr, manager.Changes(m.observeClaimUse)); err != nil {
		return err
	}
	if err := manager.Observe(ctx, mgr, manager.States(m.observeLedger)); err != nil {
		return err
	}
	return manager.Observe(ctx, mgr, manager.States(m.observeClass))
}
