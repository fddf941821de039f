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
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cozystack/address-controller/test/slot"
)

// TestBenchSmoke runs every scenario with 50 claims, the way `make bench`
// runs them with thousands, so that the benchmark keeps working: each must
// converge, at a non-zero rate, with its API writes measured.
func TestBenchSmoke(t *testing.T) {
	report := smoke(t, 4*time.Minute, Config{Sizes: []int{50}, Workers: 16, QPS: -1,
		ClaimConcurrency: 4, AddressConcurrency: 4, DriverConcurrency: 4,
		Unrelated: 50, Settle: time.Second, WireRebuilds: 3, Pprof: true, DriverMemoryLimit: "1Gi", Log: t.Logf})
	if w := report.Wire; w == nil || w.Skipped != "" || w.Error != "" {
		t.Errorf("wire scenario: %+v, want it run without error", w)
	} else if w.FirstAnswerMs.N != 4 || w.OutageMs.N != 3 || w.Unrecovered != 0 || w.FirstAnswerMs.P50 <= 0 || w.ProbesPerSec < 50 {
		t.Errorf("wire scenario: %+v, want 4 first answers, 3 recovered outages, at 50 probes/s or more", w)
	}
	checkScenarios(t, report, []string{"a-static", "b-metallb", "c-associate", "d-teardown"}, "metallb")
	for _, res := range report.Sizes[0].Scenarios {
		for _, proc := range []string{procCore, procDriver} {
			if ps := res.Processes[proc]; ps.LiveHeapMiB <= 0 || ps.LiveHeapMiB > ps.RSSMiB || ps.FileRSSMiB <= 0 {
				t.Errorf("%s: %s's live heap %.1f MiB, file pages %.1f MiB of RSS %.1f MiB; want both read, within RSS",
					res.Scenario, proc, ps.LiveHeapMiB, ps.FileRSSMiB, ps.RSSMiB)
			}
		}
		// The limit is read back from the driver's runtime: only it got one.
		if core, driver := res.Processes[procCore].MemoryLimitMiB, res.Processes[procDriver].MemoryLimitMiB; core != 0 || driver != 960 {
			t.Errorf("%s: memory limits core %.0f MiB, driver %.0f MiB; want none and 960 (1Gi less the reserve)", res.Scenario, core, driver)
		}
	}
}

// smoke runs the benchmark with cfg within timeout, fails t at once if the
// run fails, and logs its Markdown report. The timeout counts from when the
// process holds a test slot (test/slot), which the run's cluster needs: in
// make test the wait for one is the other packages' time, not the run's.
func smoke(t *testing.T, timeout time.Duration, cfg Config) *Report {
	t.Helper()
	if err := slot.Take(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	report, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	report.Markdown(&md)
	t.Log("\n" + md.String())
	return report
}

// checkScenarios checks that a run of 50 claims measured its ceiling and
// the scenarios want, in order, each converged at a non-zero rate with its
// API writes and the memory of the managers and of the allocator (the
// process named allocator) measured.
func checkScenarios(t *testing.T, report *Report, want []string, allocator string) {
	t.Helper()
	if len(report.Sizes) != 1 {
		t.Fatalf("measured %d sizes, want 1", len(report.Sizes))
	}
	size := report.Sizes[0]
	if size.Ceiling.WritesPerSecond <= 0 || size.Ceiling.Writes < 2*50 {
		t.Errorf("ceiling: %+v, want 100 writes or more at a non-zero rate", size.Ceiling)
	}
	if len(size.Scenarios) != len(want) {
		t.Fatalf("ran %d scenarios, want %v", len(size.Scenarios), want)
	}
	for i, res := range size.Scenarios {
		if res.Scenario != want[i] {
			t.Errorf("scenario %d is %s, want %s", i, res.Scenario, want[i])
		}
		if !res.Converged {
			t.Errorf("%s did not converge: %s", res.Scenario, res.Error)
			continue
		}
		if res.PerSecond <= 0 || res.P50Ms <= 0 || res.P99Ms < res.P50Ms {
			t.Errorf("%s: rate %.1f/s, p50 %.0fms, p99 %.0fms; want a positive rate and 0 < p50 <= p99",
				res.Scenario, res.PerSecond, res.P50Ms, res.P99Ms)
		}
		// Every scenario writes at least its minimum, one of which is the
		// benchmark's own create or delete per claim.
		if res.WritesPerClaim < float64(res.MinWrites) || res.ByClient["bench"] != 1 {
			t.Errorf("%s: %.2f writes per claim (%.2f by the benchmark), want at least %d, exactly 1 by the benchmark",
				res.Scenario, res.WritesPerClaim, res.ByClient["bench"], res.MinWrites)
		}
		if res.CeilingRatio <= 0 {
			t.Errorf("%s: ceiling ratio %.2f, want > 0", res.Scenario, res.CeilingRatio)
		}
		for _, p := range []string{"core", "driver", allocator} {
			if ps := res.Processes[p]; ps.PeakRSSMiB <= 0 {
				t.Errorf("%s: no peak RSS read for %s", res.Scenario, p)
			}
		}
	}
}
