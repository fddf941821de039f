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

// podSpec returns the pod template's spec of the one rendered Deployment.
func podSpec(g Gomega, objs []*unstructured.Unstructured) map[string]any {
	spec, found, err := unstructured.NestedMap(deployment(g, objs).Object, "spec", "template", "spec")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue())
	return spec
}

// TestAvailabilityValues renders the PodDisruptionBudget, anti-affinity,
// topology spread and priority class values of every chart, and the memory
// limits sized in docs/install.md.
func TestAvailabilityValues(t *testing.T) {
	const ns = "ipam-system"
	for _, tc := range []struct {
		chart, manager, memoryLimit string
	}{
		{coreChart, "address-controller", "384Mi"},
		{driverChart, "metallb-iad", "1Gi"},
		{ciliumChart, "cilium-iad", "512Mi"},
	} {
		selector := map[string]any{"app.kubernetes.io/name": tc.manager, "app.kubernetes.io/instance": tc.chart}

		t.Run(tc.chart+" defaults", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, tc.chart, tc.chart, ns)
			spec := podSpec(g, objs)
			g.Expect(spec).To(HaveKeyWithValue("affinity", HaveKeyWithValue("podAntiAffinity",
				HaveKeyWithValue("preferredDuringSchedulingIgnoredDuringExecution", ConsistOf(And(
					HaveKeyWithValue("weight", BeNumerically("==", 100)),
					HaveKeyWithValue("podAffinityTerm", And(
						HaveKeyWithValue("topologyKey", "kubernetes.io/hostname"),
						HaveKeyWithValue("labelSelector", HaveKeyWithValue("matchLabels", selector)),
					)),
				))))), "replicas prefer distinct nodes")
			g.Expect(spec).NotTo(HaveKey("priorityClassName"))
			g.Expect(spec).NotTo(HaveKey("topologySpreadConstraints"))
			g.Expect(ofKind(objs, "PodDisruptionBudget")).To(BeEmpty())
			g.Expect(managerContainer(g, deployment(g, objs))).To(HaveKeyWithValue("resources",
				HaveKeyWithValue("limits", HaveKeyWithValue("memory", tc.memoryLimit))))
		})

		t.Run(tc.chart+" with every availability value", func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, tc.chart, tc.chart, ns, "--set", "replicas=3", "--set", "podAntiAffinity=hard",
				"--set", "priorityClassName=ipam-critical",
				"--set-json", `topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule"}]`,
				"--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=2")
			spec := podSpec(g, objs)
			g.Expect(spec).To(HaveKeyWithValue("priorityClassName", "ipam-critical"))
			g.Expect(spec).To(HaveKeyWithValue("affinity", HaveKeyWithValue("podAntiAffinity",
				HaveKeyWithValue("requiredDuringSchedulingIgnoredDuringExecution", ConsistOf(And(
					HaveKeyWithValue("topologyKey", "kubernetes.io/hostname"),
					HaveKeyWithValue("labelSelector", HaveKeyWithValue("matchLabels", selector)),
				))))))
			g.Expect(spec).To(HaveKeyWithValue("topologySpreadConstraints", ConsistOf(And(
				HaveKeyWithValue("topologyKey", "topology.kubernetes.io/zone"),
				HaveKeyWithValue("whenUnsatisfiable", "DoNotSchedule"),
				HaveKeyWithValue("labelSelector", HaveKeyWithValue("matchLabels", selector)),
			))), "a constraint without a labelSelector selects the chart's pods")
			pdbs := ofKind(objs, "PodDisruptionBudget")
			g.Expect(pdbs).To(HaveLen(1))
			g.Expect(pdbs[0].GetNamespace()).To(Equal(ns))
			g.Expect(pdbs[0].Object).To(HaveKeyWithValue("spec", And(
				HaveKeyWithValue("minAvailable", BeNumerically("==", 2)),
				Not(HaveKey("maxUnavailable")),
				HaveKeyWithValue("selector", HaveKeyWithValue("matchLabels", selector)),
			)))
		})

		t.Run(tc.chart+" PodDisruptionBudget defaults to maxUnavailable 1", func(t *testing.T) {
			g := NewWithT(t)
			pdbs := ofKind(render(t, tc.chart, tc.chart, ns, "--set", "podDisruptionBudget.enabled=true"), "PodDisruptionBudget")
			g.Expect(pdbs).To(HaveLen(1))
			g.Expect(pdbs[0].Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("maxUnavailable", BeNumerically("==", 1))))
		})

		t.Run(tc.chart+" refuses minAvailable with maxUnavailable", func(t *testing.T) {
			g := NewWithT(t)
			_, err := runHelm(t, "template", tc.chart, chartDir(t, tc.chart), "--namespace", ns,
				"--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.minAvailable=1",
				"--set", "podDisruptionBudget.maxUnavailable=1")
			g.Expect(err).To(MatchError(ContainSubstring("podDisruptionBudget: set minAvailable or maxUnavailable, not both")))
		})

		t.Run(tc.chart+" anti-affinity off, or given in affinity, adds no rule of its own", func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(podSpec(g, render(t, tc.chart, tc.chart, ns, "--set", "podAntiAffinity="))).NotTo(HaveKey("affinity"))
			spec := podSpec(g, render(t, tc.chart, tc.chart, ns, "--set", "podAntiAffinity=hard",
				"--set-json", `affinity={"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"podAffinityTerm":{"topologyKey":"example.com/rack"}}]}}`))
			g.Expect(spec).To(HaveKeyWithValue("affinity", HaveKeyWithValue("podAntiAffinity", And(
				Not(HaveKey("requiredDuringSchedulingIgnoredDuringExecution")),
				HaveKeyWithValue("preferredDuringSchedulingIgnoredDuringExecution", ConsistOf(
					HaveKeyWithValue("podAffinityTerm", HaveKeyWithValue("topologyKey", "example.com/rack")))),
			))))
		})
	}
}
