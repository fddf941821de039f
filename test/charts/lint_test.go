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
)

// TestLint lints every chart strictly, with default values and with every
// option switched on.
func TestLint(t *testing.T) {
	for _, chart := range allCharts {
		t.Run(chart+" with default values", func(t *testing.T) {
			out, err := runHelm(t, "lint", "--strict", chartDir(t, chart))
			NewWithT(t).Expect(err).NotTo(HaveOccurred(), out)
		})
		t.Run(chart+" with every option", func(t *testing.T) {
			out, err := runHelm(t, "lint", "--strict", chartDir(t, chart), "-f", allOptions(t, chart))
			NewWithT(t).Expect(err).NotTo(HaveOccurred(), out)
		})
	}
}

// TestValuesSchema checks that each chart's values.schema.json, or a template
// guard, rejects values the chart cannot honour, naming the culprit.
func TestValuesSchema(t *testing.T) {
	policy := map[string]string{coreChart: "addressNamePolicy", driverChart: "admissionPolicy", ciliumChart: "admissionPolicy"}
	for _, chart := range allCharts {
		p := policy[chart]
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"replicas must be a number", []string{"--set", "replicas=two"}, "/replicas"},
			{"leaderElection must be a boolean", []string{"--set", "leaderElection=yes"}, "/leaderElection"},
			{"logLevel must be a zap level", []string{"--set", "logLevel=loud"}, "/logLevel"},
			{"extraArgs must be a list", []string{"--set", "extraArgs=--foo"}, "/extraArgs"},
			{"unknown values are refused", []string{"--set", "replica=2"}, "'replica' not allowed"},
			{"image.pullPolicy must be a pull policy", []string{"--set", "image.pullPolicy=Sometimes"}, "/image/pullPolicy"},
			{"the policy switch must be a boolean", []string{"--set", p + ".enabled=on"}, "/" + p + "/enabled"},
			{"validationActions must be known", []string{"--set-json", p + `.validationActions=["Block"]`}, "/" + p + "/validationActions/0"},
			{"validationActions cannot be empty", []string{"--set-json", p + ".validationActions=[]"}, "/" + p + "/validationActions"},
			{"validationActions cannot both deny and warn", []string{"--set-json", p + `.validationActions=["Deny","Warn"]`}, "/" + p + "/validationActions/1"},
			{"allowedGroups must be a list of names", []string{"--set", p + ".allowedGroups=admins"}, "/" + p + "/allowedGroups"},
			{"namespaceSelector must be a label selector", []string{"--set-json", p + `.namespaceSelector={"matchLabel":{"a":"b"}}`}, "/" + p + "/namespaceSelector"},
			{"several replicas need leader election", []string{"--set", "replicas=2", "--set", "leaderElection=false"}, "replicas above 1 need leaderElection"},
		} {
			t.Run(chart+": "+tc.name, func(t *testing.T) {
				g := NewWithT(t)
				_, err := runHelm(t, append([]string{"template", chart, chartDir(t, chart)}, tc.args...)...)
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring(tc.want))
			})
		}
	}
	for _, chart := range []string{driverChart, ciliumChart} {
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"the driver's policy switch must be a boolean", []string{"--set", "serviceWritePolicy.enabled=on"}, "/serviceWritePolicy/enabled"},
			{"the driver's policy takes known validationActions", []string{"--set-json", `serviceWritePolicy.validationActions=["Block"]`}, "/serviceWritePolicy/validationActions/0"},
			{"the driver's policy has nothing else to set", []string{"--set", "serviceWritePolicy.allowedUsernames={admin}"}, "'allowedUsernames' not allowed"},
		} {
			t.Run(chart+": "+tc.name, func(t *testing.T) {
				g := NewWithT(t)
				_, err := runHelm(t, append([]string{"template", chart, chartDir(t, chart)}, tc.args...)...)
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring(tc.want))
			})
		}
		t.Run(chart+": placeholderNamespace must be a namespace name", func(t *testing.T) {
			g := NewWithT(t)
			_, err := runHelm(t, "template", chart, chartDir(t, chart), "--set", "placeholderNamespace=Not_A_Namespace")
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("/placeholderNamespace"))
		})
	}
	t.Run(ciliumChart+": MetalLB's values are refused", func(t *testing.T) {
		g := NewWithT(t)
		_, err := runHelm(t, "template", ciliumChart, chartDir(t, ciliumChart), "--set", "metallbNamespace=metallb-system")
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("'metallbNamespace' not allowed"))
	})
}
