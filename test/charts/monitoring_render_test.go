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
	"maps"
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

// alertsByName renders chart with monitoring on and args, and returns its
// alerting rules by name.
func alertsByName(t *testing.T, chart string, args ...string) map[string]alertingRule {
	t.Helper()
	out := map[string]alertingRule{}
	for _, r := range renderedRules(t, chart, append([]string{"--set", "monitoring.enabled=true"}, args...)...) {
		out[r.Alert] = r
	}
	return out
}

// TestAlertValues checks the values that shape every chart's alerts: which
// of the leader and down alerts leader election brings, labels for
// Alertmanager's routes, switches and per-alert overrides, and that the
// schema refuses an alert name the chart does not have.
func TestAlertValues(t *testing.T) {
	leaderAlert := map[string]string{coreChart: "AddressControllerWithoutLeader", driverChart: "MetalLBDriverWithoutLeader", ciliumChart: "CiliumDriverWithoutLeader"}
	downAlert := map[string]string{coreChart: "AddressControllerDown", driverChart: "MetalLBDriverDown", ciliumChart: "CiliumDriverDown"}
	// someAlert is an alert every rendering of the chart has.
	someAlert := map[string]string{coreChart: "IPAddressConflictOrLost", driverChart: "IPAddressHandoffSlow", ciliumChart: "IPAddressHandoffSlow"}
	for _, chart := range allCharts {
		t.Run(chart, func(t *testing.T) {
			g := NewWithT(t)
			on := alertsByName(t, chart)
			g.Expect(on).To(HaveKey(leaderAlert[chart]))
			g.Expect(on).NotTo(HaveKey(downAlert[chart]), "with leader election, the leader alert covers a manager that is down")
			off := alertsByName(t, chart, "--set", "leaderElection=false")
			g.Expect(off).To(HaveKey(downAlert[chart]))
			g.Expect(off).NotTo(HaveKey(leaderAlert[chart]))
			for name, r := range on {
				g.Expect(r.Labels).To(HaveKey("severity"), "%s has a severity", name)
			}

			alert := someAlert[chart]
			shaped := alertsByName(t, chart,
				"--set", "monitoring.alerts.additionalLabels.team=networking",
				"--set", "monitoring.alerts.additionalLabels.tier=platform",
				"--set", "monitoring.alerts.disabled[0]="+leaderAlert[chart],
				"--set", "monitoring.alerts.overrides."+alert+".for=42m",
				"--set", "monitoring.alerts.overrides."+alert+".severity=info",
				"--set", "monitoring.alerts.overrides."+alert+".labels.tier=tenant")
			g.Expect(shaped).NotTo(HaveKey(leaderAlert[chart]), "a disabled alert is not installed")
			g.Expect(shaped).To(HaveLen(len(on) - 1))
			for name, r := range shaped {
				g.Expect(r.Labels).To(HaveKeyWithValue("team", "networking"), "%s carries the additional labels", name)
				if name != alert {
					g.Expect(r).To(Equal(alertingRule{Alert: name, Expr: on[name].Expr, For: on[name].For,
						Labels: merged(on[name].Labels, map[string]string{"team": "networking", "tier": "platform"}), Annotations: on[name].Annotations}),
						"%s changes only by the additional labels", name)
				}
			}
			g.Expect(shaped[alert].For).To(Equal("42m"))
			g.Expect(shaped[alert].Labels).To(Equal(map[string]string{"severity": "info", "team": "networking", "tier": "tenant"}),
				"the override's severity and labels win over the additional labels")

			for _, bad := range []struct{ set, want string }{
				{"monitoring.alerts.disabled[0]=NoSuchAlert", "/monitoring/alerts/disabled/0"},
				{"monitoring.alerts.overrides.NoSuchAlert.for=5m", "/monitoring/alerts/overrides"},
				{"monitoring.alerts.overrides." + alert + ".for=soon", "/monitoring/alerts/overrides/" + alert + "/for"},
				{"monitoring.alerts.overrides." + alert + ".severty=info", "'severty' not allowed"},
				{"monitoring.alerts.additionalLabels.severity=page", "/monitoring/alerts/additionalLabels"},
			} {
				_, err := runHelm(t, "template", chart, chartDir(t, chart), "--set", "monitoring.enabled=true", "--set", bad.set)
				g.Expect(err).To(MatchError(ContainSubstring(bad.want)), "%s is refused", bad.set)
			}
		})
	}
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}
