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
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"

	"github.com/cozystack/address-controller/internal/tombstone"
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
	claimInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClaim{})
	if err != nil {
		return err
	}
	if _, err = claimInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observeClaimUse(nil, obj.(*v1alpha1.IPAddressClaim)) },
		UpdateFunc: func(o, n any) { m.observeClaimUse(o.(*v1alpha1.IPAddressClaim), n.(*v1alpha1.IPAddressClaim)) },
		DeleteFunc: func(obj any) {
			if c, ok := tombstone.As[*v1alpha1.IPAddressClaim](obj); ok {
				m.observeClaimUse(c, nil)
			}
		},
	}); err != nil {
		return err
	}
	ledgerInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClassUsage{})
	if err != nil {
		return err
	}
	if _, err = ledgerInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observeLedger(obj.(*v1alpha1.IPAddressClassUsage), false) },
		UpdateFunc: func(_, n any) { m.observeLedger(n.(*v1alpha1.IPAddressClassUsage), false) },
		DeleteFunc: func(obj any) {
			if l, ok := tombstone.As[*v1alpha1.IPAddressClassUsage](obj); ok {
				m.observeLedger(l, true)
			}
		},
	}); err != nil {
		return err
	}
	classInf, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.IPAddressClass{})
	if err != nil {
		return err
	}
	_, err = classInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observeClass(obj.(*v1alpha1.IPAddressClass), false) },
		UpdateFunc: func(_, n any) { m.observeClass(n.(*v1alpha1.IPAddressClass), false) },
		DeleteFunc: func(obj any) {
			if c, ok := tombstone.As[*v1alpha1.IPAddressClass](obj); ok {
				m.observeClass(c, true)
			}
		},
	})
	return err
}
