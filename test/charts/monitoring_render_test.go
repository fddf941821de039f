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

package charts

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRenderedMonitoring checks what monitoring.enabled and metricsCertSecret
// add to each chart, and that neither adds anything by default.
func TestRenderedMonitoring(t *testing.T) {
	const ns = "ipam-system"
	monitoringKinds := []string{"ServiceMonitor", "PrometheusRule", "ConfigMap"}
	for _, chart := range allCharts {
		t.Run(chart+" by default", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, chart, chart, ns)
			for _, kind := range monitoringKinds {
				g.Expect(ofKind(objs, kind)).To(BeEmpty(), "no %s by default", kind)
			}
			m := managerContainer(g, deployment(g, objs))
			g.Expect(m["args"]).NotTo(ContainElement(HavePrefix("--metrics-cert-path")), "the self-signed certificate by default")
			g.Expect(m).NotTo(HaveKey("volumeMounts"))
		})

		t.Run(chart+" with monitoring", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, chart, chart, ns, "--set", "monitoring.enabled=true", "--set", "monitoring.labels.release=prom")
			for _, kind := range monitoringKinds {
				g.Expect(ofKind(objs, kind)).To(HaveLen(1), "one %s", kind)
			}
			sm := ofKind(objs, "ServiceMonitor")[0]
			g.Expect(sm.GetLabels()).To(HaveKeyWithValue("release", "prom"))
			g.Expect(ofKind(objs, "PrometheusRule")[0].GetLabels()).To(HaveKeyWithValue("release", "prom"))
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			g.Expect(endpoints).To(ConsistOf(And(
				HaveKeyWithValue("port", "https"), HaveKeyWithValue("scheme", "https"),
				HaveKeyWithValue("tlsConfig", HaveKeyWithValue("insecureSkipVerify", true)),
			)))
			selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			svc := ofKind(objs, "Service")[0]
			for k, v := range selector {
				g.Expect(svc.GetLabels()).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the metrics Service")
			}
			g.Expect(ofKind(objs, "ConfigMap")[0].GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
		})

		t.Run(chart+" with a metrics certificate", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, chart, chart, ns, "--set", "metricsCertSecret=metrics-tls", "--set", "monitoring.enabled=true")
			dep := deployment(g, objs)
			m := managerContainer(g, dep)
			g.Expect(m["args"]).To(ContainElement("--metrics-cert-path=/etc/metrics-certs"))
			g.Expect(m["volumeMounts"]).To(ConsistOf(And(HaveKeyWithValue("mountPath", "/etc/metrics-certs"), HaveKeyWithValue("readOnly", true))))
			volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
			g.Expect(volumes).To(ConsistOf(HaveKeyWithValue("secret", HaveKeyWithValue("secretName", "metrics-tls"))))
			endpoints, _, _ := unstructured.NestedSlice(ofKind(objs, "ServiceMonitor")[0].Object, "spec", "endpoints")
			g.Expect(endpoints).To(ConsistOf(HaveKeyWithValue("tlsConfig", And(
				HaveKeyWithValue("serverName", chart+"-metrics."+ns+".svc"),
				HaveKeyWithValue("ca", HaveKeyWithValue("secret", HaveKeyWithValue("name", "metrics-tls"))),
				Not(HaveKey("insecureSkipVerify")),
			))))
		})
	}
}
