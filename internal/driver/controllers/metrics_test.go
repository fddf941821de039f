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

package controllers

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// inMismatchSeries reads the claims_in_ledger_mismatch gauge by class.
func inMismatchSeries(t *testing.T, v *prometheus.GaugeVec) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	v.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		out[d.GetLabel()[0].GetValue()] = d.GetGauge().GetValue()
	}
	return out
}

// TestLedgerMismatchIsAState walks claims through provisioning passes: the
// gauge counts the claims whose last pass met a mismatch, and falls back
// only when their next pass agrees, they stop wanting provisioning, or their
// class goes.
func TestLedgerMismatchIsAState(t *testing.T) {
	m := newMetricSet()
	m.classRendered("a")
	m.classRendered("b")

	steps := []struct {
		name  string
		apply func()
		want  map[string]float64
	}{
		{"rendered classes start at 0", func() {}, map[string]float64{"a": 0, "b": 0}},
		{"a claim meets a mismatch", func() { m.ledgerState("t/web", "a", true) }, map[string]float64{"a": 1, "b": 0}},
		{"its next pass meets it again", func() { m.ledgerState("t/web", "a", true) }, map[string]float64{"a": 1, "b": 0}},
		{"a second claim meets one", func() { m.ledgerState("t/api", "a", true) }, map[string]float64{"a": 2, "b": 0}},
		{"another class's claim agrees", func() { m.ledgerState("t/db", "b", false) }, map[string]float64{"a": 2, "b": 0}},
		{"the first claim's pass agrees", func() { m.ledgerState("t/web", "a", false) }, map[string]float64{"a": 1, "b": 0}},
		{"the second claim is deleted", func() { m.ledgerState("t/api", "", false) }, map[string]float64{"a": 0, "b": 0}},
		{"a claim of b meets one", func() { m.ledgerState("t/db", "b", true) }, map[string]float64{"a": 0, "b": 1}},
		{"class b goes", func() { m.classGone("b") }, map[string]float64{"a": 0}},
		{"a trailing pass of the gone class's claim brings nothing back", func() { m.ledgerState("t/db", "", false) }, map[string]float64{"a": 0}},
	}
	for _, s := range steps {
		s.apply()
		if got := inMismatchSeries(t, m.inMismatch); !maps.Equal(got, s.want) {
			t.Errorf("%s: claims in mismatch %v, want %v", s.name, got, s.want)
		}
	}
}
