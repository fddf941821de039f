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

package steadytest

import (
	"testing"

	. "github.com/onsi/gomega"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
)

// classSeries reads, from the managers' registry, the value of every series
// labelled with class, by metric name.
func classSeries(g Gomega, class string) map[string]float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "class" && l.GetValue() == class {
					out[f.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func TestClassMetricsStartAtZeroAndGoWithTheClass(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	name, _, _ := mt.Class(t, g, false)
	g.Eventually(func() map[string]float64 { return classSeries(g, name) }, mt.Timeout, mt.Tick).Should(And(
		HaveKeyWithValue("address_driver_pool_capacity", 15.0), // a /28 without its .0
		HaveKeyWithValue("address_driver_pool_used", 0.0),
		HaveKeyWithValue("address_driver_provisioned_total", 0.0),
		HaveKeyWithValue("address_driver_handoffs_total", 0.0),
		HaveKeyWithValue("address_driver_conflicts_total", 0.0),
		HaveKeyWithValue("address_driver_ledger_mismatches_total", 0.0),
		HaveKeyWithValue("address_driver_claims_in_ledger_mismatch", 0.0),
	), "a rendered class's series exist before anything happens to it")

	class := &v1alpha1.IPAddressClass{}
	class.Name = name
	g.Expect(mt.Client.Delete(t.Context(), class)).To(Succeed())
	g.Eventually(mt.Kit.Gone(class), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Eventually(func() map[string]float64 { return classSeries(g, name) }, mt.Timeout, mt.Tick).Should(BeEmpty())
}
