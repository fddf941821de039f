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

package drivertest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// classMetrics: a rendered class's series exist, at zero, before anything
// happens to it (an alert on a rate needs a series to start from), its
// capacity series says what its status says, and every series of the
// class goes with it.
func classMetrics(t *testing.T, g *WithT, s *suite) {
	v4, v6 := s.h.Ranges()
	name := s.class(t, g, v1alpha1.ReclaimRetain, v4, v6)
	g.Eventually(func() map[string]float64 { return classSeries(g, name) }, timeout, tick).Should(And(
		HaveKeyWithValue("address_driver_pool_capacity", 32.0), // a /28 and a /124, every address usable
		HaveKeyWithValue("address_driver_pool_used", 0.0),
		HaveKeyWithValue("address_driver_provisioned_total", 0.0),
		HaveKeyWithValue("address_driver_handoffs_total", 0.0),
		HaveKeyWithValue("address_driver_conflicts_total", 0.0),
		HaveKeyWithValue("address_driver_ledger_mismatches_total", 0.0),
		HaveKeyWithValue("address_driver_claims_in_ledger_mismatch", 0.0),
	), "a rendered class's series exist before anything happens to it")

	class := &v1alpha1.IPAddressClass{}
	class.Name = name
	g.Expect(s.c.Delete(context.Background(), class)).To(Succeed())
	g.Eventually(s.kit.Gone(class), timeout, tick).Should(BeTrue())
	g.Eventually(func() map[string]float64 { return classSeries(g, name) }, timeout, tick).Should(BeEmpty(),
		"the class's series go with it")
}

// classSeries reads, from the registry the driver in this process
// registers with, the value of every series labelled with class, by metric
// name.
func classSeries(g *WithT, class string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range testkit.MetricFamilies(g) {
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

// shrinking: a class whose parameters move to other ranges keeps the
// addresses it has, outside its new ranges: they stay Bound and held, the
// class says which it keeps, its counts take nothing from the new ranges
// for them, and a Service still gets them.
func shrinking(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4, v6)
	s.claim(g, ns, "web", class, v1alpha1.IPv4)
	addrs := s.bound(g, ns, "web")
	s.held(g, addrs)
	counts := s.countsOf(g, class)
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{allOf16And16, "1 1 0", "31 15 16"}))

	other, _ := s.h.Ranges()
	g.Eventually(func() error {
		c := &v1alpha1.IPAddressClass{}
		if err := s.c.Get(context.Background(), client.ObjectKey{Name: class}, c); err != nil {
			return err
		}
		c.Spec.Parameters = b.Class("", "", b.Parameters(s.h.Parameters(other))).Spec.Parameters
		return s.c.Update(context.Background(), c)
	}, timeout, tick).Should(Succeed(), "class %s moves to %s", class, other)

	g.Eventually(func() metav1.Condition {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(s.c.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		return testkit.Condition(c.Status.Conditions, v1alpha1.ConditionRendered)
	}, timeout, tick).Should(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", driver.ReasonOutsideRange),
		HaveField("Message", ContainSubstring(addrs[0].Address))), "the class says it keeps %s", addrs[0].Address)
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{"16 16 -", "1 1 -", "16 16 -"}),
		"an IPv4 /28 now, and the address kept outside it takes nothing from it")
	g.Consistently(s.kit.StateOfAddress(g, addrs[0].Name), settle, tick).Should(HaveField("Phase", v1alpha1.AddressBound))
	s.held(g, addrs)

	s.kit.Create(g, b.Service(ns, "svc", b.ForClaim("web")))
	s.carried(g, ns, "svc", addrs)
}
