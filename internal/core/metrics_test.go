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

package core_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// metricValue reads one sample from the manager's registry: a gauge's value
// or a histogram's count, for the series whose labels include want.
func metricValue(g Gomega, name string, want map[string]string) float64 {
	for _, m := range testkit.Series(g, name) {
		if hasLabels(m, want) {
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}

func TestMetrics(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	bindsBefore := metricValue(g, "address_controller_claim_bind_duration_seconds", nil)
	kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-a", "198.18.17.1", class), b.Address(class+"-b", "198.18.17.2", class))
	g.Eventually(func() float64 {
		return metricValue(g, "address_controller_ipaddresses", map[string]string{"class": class, "phase": "Available"})
	}, timeout, tick).Should(Equal(2.0))

	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	g.Eventually(func() []float64 {
		return []float64{
			metricValue(g, "address_controller_ipaddresses", map[string]string{"class": class, "phase": "Available"}),
			metricValue(g, "address_controller_ipaddresses", map[string]string{"class": class, "phase": "Bound"}),
		}
	}, timeout, tick).Should(Equal([]float64{1, 1}))
	g.Expect(metricValue(g, "address_controller_ipaddressclaims", map[string]string{"phase": "Bound"})).To(BeNumerically(">=", 1))
	g.Expect(metricValue(g, "address_controller_claim_bind_duration_seconds", nil)).To(BeNumerically(">=", bindsBefore+1))
}

// seriesOfClass names the metric families that have a series for class.
func seriesOfClass(g Gomega, class string) []string {
	var names []string
	for _, f := range testkit.MetricFamilies(g) {
		for _, m := range f.GetMetric() {
			if hasLabels(m, map[string]string{"class": class}) {
				names = append(names, f.GetName())
				break
			}
		}
	}
	return names
}

func TestMetricsOfADeletedClassAreDeleted(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	class := testkit.Name(t)
	addr := b.Address(class+"-a", "198.18.17.9", class)
	kit.Make(t, g, b.Class(class, provisioner), addr)
	g.Eventually(func() []string { return seriesOfClass(g, class) }, timeout, tick).
		Should(ContainElement("address_controller_ipaddresses"))

	g.Expect(k8s.Delete(t.Context(), addr)).To(Succeed())
	g.Eventually(kit.Gone(addr), timeout, tick).Should(BeTrue())
	g.Expect(seriesOfClass(g, class)).To(ContainElement("address_controller_ipaddresses"),
		"the class's series stay, at zero, while the class exists")
	cls := &v1alpha1.IPAddressClass{}
	cls.Name = class
	g.Expect(k8s.Delete(t.Context(), cls)).To(Succeed())
	g.Eventually(kit.Gone(cls), timeout, tick).Should(BeTrue())
	g.Eventually(func() []string { return seriesOfClass(g, class) }, timeout, tick).Should(BeEmpty())
}

// TestMetricsReportTheOldestUnboundClaim moves its core's clock, so it runs
// serially on a core of its own. Each series names the namespace and why its
// claims wait, so that a tenant's mistyped class is told from a driver that
// provisions nothing.
func TestMetricsReportTheOldestUnboundClaim(t *testing.T) {
	g := NewWithT(t)
	clk, _ := startCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	kit.Create(g, b.Claim(ns, "waits", b.OfClass(class)), b.Claim(ns, "typo", b.OfClass(class+"-typo")))
	g.Eventually(kit.StateOfClaim(g, ns, "waits"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimPending))
	g.Eventually(kit.StateOfClaim(g, ns, "typo"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimPending))
	clk.advance(2 * time.Hour)
	for _, reason := range []string{v1alpha1.ReasonWaitingForProvisioning, v1alpha1.ReasonClassNotFound} {
		g.Eventually(func() float64 {
			return metricValue(g, "address_controller_oldest_unbound_claim_age_seconds", map[string]string{"namespace": ns, "reason": reason})
		}, timeout, tick).Should(BeNumerically(">=", (2*time.Hour).Seconds()), "the claim waiting with reason %s", reason)
	}
}
