//go:build cilium

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

package main

import (
	"slices"
	"testing"
	"time"

	"github.com/cozystack/address-controller/test/cluster"
)

// TestBenchSmokeCilium runs every scenario and the allocator's anchors with
// 50 claims against Cilium's LB-IPAM (build tag cilium: the operator takes
// minutes to build, `make cilium`), so that -driver cilium keeps working.
func TestBenchSmokeCilium(t *testing.T) {
	assets, err := cluster.FindAssets()
	if err != nil {
		t.Fatal(err)
	}
	if assets.CiliumOperator() == "" {
		t.Fatal("no Cilium operator built: run `make cilium`, or set CILIUM_ASSETS")
	}
	report := smoke(t, 5*time.Minute, Config{Driver: "cilium", Sizes: []int{50}, Workers: 16, QPS: -1,
		ClaimConcurrency: 4, AddressConcurrency: 4, DriverConcurrency: 4,
		Unrelated: 50, Settle: time.Second, WireRebuilds: 3, Anchors: true, Log: t.Logf})
	if s := report.Settings; s.Driver != "cilium" || s.Allocator != "Cilium" {
		t.Errorf("settings name driver %q, allocator %q; want cilium, Cilium", s.Driver, s.Allocator)
	}
	if w := report.Wire; w == nil || w.Skipped == "" {
		t.Errorf("wire scenario: %+v, want it skipped: it needs MetalLB", w)
	}
	if len(report.Sizes) != 1 {
		t.Fatalf("measured %d sizes, want 1", len(report.Sizes))
	}
	// The anchors first, with the managers stopped: the operator alone.
	size := &report.Sizes[0]
	anchors := []string{"cilium-alone", "cilium-pinned"}
	for _, res := range size.Scenarios {
		if !slices.Contains(anchors, res.Scenario) {
			continue
		}
		if !res.Converged || res.PerSecond <= 0 || res.Processes["cilium"].PeakRSSMiB <= 0 {
			t.Errorf("%s: converged %v (%s) at %.1f/s, operator peak %.0f MiB; want converged at a positive rate, "+
				"the operator's memory read", res.Scenario, res.Converged, res.Error, res.PerSecond,
				res.Processes["cilium"].PeakRSSMiB)
		}
		if _, ok := res.Processes[procDriver]; ok {
			t.Errorf("%s: the driver ran during an anchor", res.Scenario)
		}
	}
	if got := len(size.Comparisons); got != 2 {
		t.Errorf("%d comparisons %+v, want b-cilium and c-associate against their anchors", got, size.Comparisons)
	}
	size.Scenarios = slices.DeleteFunc(size.Scenarios, func(r Result) bool { return slices.Contains(anchors, r.Scenario) })
	checkScenarios(t, report, []string{"a-static", "b-cilium", "c-associate", "d-teardown"}, "cilium")
}
