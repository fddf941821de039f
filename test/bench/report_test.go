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
	"strings"
	"testing"
)

func result(name string, perSecond float64, converged bool) Result {
	return Result{Scenario: name, N: 100, PerSecond: perSecond, Converged: converged, WritesPerClaim: 2}
}

// reportHas renders r as Markdown, fails t for each of want it lacks, and
// returns it.
func reportHas(t *testing.T, r *Report, want ...string) string {
	t.Helper()
	var md bytes.Buffer
	r.Markdown(&md)
	for _, w := range want {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, md.String())
		}
	}
	return md.String()
}

func TestComparisons(t *testing.T) {
	anchorAlone, anchorPinned := backends["metallb"].anchorAlone(), backends["metallb"].anchorPinned()
	for _, tc := range []struct {
		name      string
		scenarios []Result
		want      []Comparison
	}{
		{
			name:      "no anchors, no comparisons",
			scenarios: []Result{result("a-static", 60, true), result("b-metallb", 15, true)},
		},
		{
			name: "each product scenario against each anchor beside it, every handoff mode",
			scenarios: []Result{
				result(anchorPeer, 20, true), result(anchorPeerUnthrottled, 30, true),
				result(anchorAlone, 40, true), result(anchorPinned, 50, true),
				result("a-static", 60, true), result("b-metallb-auto", 10, true), result("c-associate-auto", 5, true),
				result("d-teardown-auto", 9, true), result("b-metallb-gap", 30, true),
			},
			want: []Comparison{
				{Product: "a-static", Anchor: anchorPeer, Ratio: 3, Target: 8},
				{Product: "a-static", Anchor: anchorPeerUnthrottled, Ratio: 2, Target: 3},
				{Product: "b-metallb-auto", Anchor: anchorAlone, Ratio: 0.25, Target: 0.5},
				{Product: "c-associate-auto", Anchor: anchorPinned, Ratio: 0.1},
				{Product: "b-metallb-gap", Anchor: anchorAlone, Ratio: 0.75, Target: 0.5},
			},
		},
		{
			name: "another driver's path against its own allocator's anchors, with no target",
			scenarios: []Result{
				result(backends["cilium"].anchorAlone(), 40, true), result(backends["cilium"].anchorPinned(), 50, true),
				result("b-cilium", 10, true), result("c-associate", 25, true),
			},
			want: []Comparison{
				{Product: "b-cilium", Anchor: "cilium-alone", Ratio: 0.25},
				{Product: "c-associate", Anchor: "cilium-pinned", Ratio: 0.5},
			},
		},
		{
			name:      "no ratio when either side did not converge",
			scenarios: []Result{result(anchorPeer, 20, false), result("a-static", 60, true)},
			want:      []Comparison{{Product: "a-static", Anchor: anchorPeer, Target: 8}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Size{N: 100, Scenarios: tc.scenarios}.comparisons()
			if len(got) != len(tc.want) {
				t.Fatalf("got %d comparisons %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Product != w.Product || g.Anchor != w.Anchor || g.Ratio != w.Ratio || g.Target != w.Target {
					t.Errorf("comparison %d: got %s vs %s ratio %.2f target %g, want %s vs %s ratio %.2f target %g",
						i, g.Product, g.Anchor, g.Ratio, g.Target, w.Product, w.Anchor, w.Ratio, w.Target)
				}
			}
		})
	}
}

func TestMarkdownShowsAnchors(t *testing.T) {
	size := Size{N: 100, Scenarios: []Result{result(anchorPeer, 20, true), result("a-static", 60, true)}}
	size.Scenarios[0].Processes = map[string]ProcStats{anchorPeer: {PeakRSSMiB: 42, CPUSeconds: 1.5}}
	size.Comparisons = size.comparisons()
	reportHas(t, &Report{Sizes: []Size{size}},
		"| 100 | a-static | peer | 60.0 | 20.0 | 3.00 | ≥ 8 |",
		"| peer | 100 | n/a | n/a | n/a | 42 / 1.5 |",
		"| peer | 100 | 0 | yes | 0.0 | 20.0 | 0.00 | 0 | 0 | 2.00 | – | – |",
	)
}

func TestPeerTitleNamesTheBuild(t *testing.T) {
	for assets, want := range map[string]string{
		"/x/bin/capi-ipam/v1.0.3":                            "peer v1.0.3 (released, client limited to 20 req/s)",
		"/x/bin/capi-ipam/v1.0.3-controller-runtime-v0.21.0": "peer v1.0.3 + controller-runtime v0.21.0 (unthrottled)",
	} {
		if got := peerTitle(assets); got != want {
			t.Errorf("peerTitle(%q) = %q, want %q", assets, got, want)
		}
	}
}

func TestMarkdownShowsBytesPerObject(t *testing.T) {
	res := result("a-static", 60, true)
	res.WritesPerClaim, res.EtcdBytesPerClaim = 4, 6000
	res.Writes = map[string]float64{"POST ipaddressclaims": 1, "PATCH ipaddressclaims/status": 1, "PATCH ipaddresses": 2}
	res.Processes = map[string]ProcStats{"kube-apiserver": {CPUSeconds: 0.8}}
	res.Objects = []ObjectSize{
		{Kind: "claim", Resource: "ipaddressclaims", Bytes: 1500, ManagedFieldsBytes: 700, Managers: 2, StoredBytes: 1400},
		{Kind: "address", Resource: "ipaddresses", Bytes: 1200, ManagedFieldsBytes: 500, Managers: 3},
	}
	ceiling := Ceiling{Writes: 200, APIServerCPUSeconds: 0.2, EtcdBytesPerWrite: 600,
		Object: &ObjectSize{Kind: "probe", Bytes: 400, ManagedFieldsBytes: 300, Managers: 2, StoredBytes: 380}}
	reportHas(t, &Report{Sizes: []Size{{N: 100, Ceiling: ceiling, Scenarios: []Result{res}}}},
		"| ceiling | 100 | probe | 400 | 300 (2) | 380 | 2.00 | 1200 | 600 | 1.00 | 1.0 |",
		"| a-static | 100 | claim | 1500 | 700 (2) | 1400 | 2.00 | 6000 | 1500 | 2.00 | 2.0 |",
		"| | | address | 1200 | 500 (3) | 0 | 2.00 | | | | |",
	)
}

func TestMarkdownNamesTheDriverAndItsAllocator(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings Settings
		want     []string
		unwanted []string
	}{
		{
			name: "a report without a driver measured MetalLB, and says nothing more",
			want: []string{"| MetalLB peak MiB / CPU s |", "| core | driver | metallb | peer | peer-unthrottled |",
				"| bench | core | driver | peer | peer-unthrottled | MetalLB and others |", "| 42 / 1.5 |", "### Stages of the MetalLB paths"},
			unwanted: []string{"Driver:"},
		},
		{
			name:     "MetalLB",
			settings: Settings{Driver: "metallb", Allocator: "MetalLB"},
			want: []string{"Driver: metallb, allocator MetalLB\n", "| MetalLB peak MiB / CPU s |",
				"| core | driver | metallb | peer | peer-unthrottled |", "| MetalLB and others |", "| 42 / 1.5 |"},
		},
		{
			name:     "Cilium",
			settings: Settings{Driver: "cilium", Allocator: "Cilium"},
			want: []string{"Driver: cilium, allocator Cilium\n", "| Cilium peak MiB / CPU s |",
				"| core | driver | cilium | peer | peer-unthrottled |",
				"| bench | core | driver | peer | peer-unthrottled | Cilium and others |", "| 42 / 1.5 |",
				"| 0.50 |", "### Stages of the Cilium paths", "| Cilium AllocationFailed events/claim |"},
			unwanted: []string{"MetalLB"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc, title := tc.settings.allocator()
			res := result(tc.settings.Driver+"-path", 10, true)
			res.Processes = map[string]ProcStats{proc: {PeakRSSMiB: 42, CPUSeconds: 1.5}}
			res.ByClient = map[string]float64{otherClients(title): 0.5}
			res.Unheld = &Unheld{Handoffs: 100}
			md := reportHas(t, &Report{Settings: tc.settings, Sizes: []Size{{N: 100, Scenarios: []Result{res}}}}, tc.want...)
			for _, unwanted := range tc.unwanted {
				if strings.Contains(md, unwanted) {
					t.Errorf("report has %q:\n%s", unwanted, md)
				}
			}
		})
	}
}

func TestBackendNamed(t *testing.T) {
	for name, want := range map[string]string{"": "metallb", "metallb": "metallb", "cilium": "cilium"} {
		d, err := backendNamed(name)
		if err != nil || d.name != want {
			t.Errorf("backendNamed(%q) = %v, %v; want %s", name, d, err, want)
		}
	}
	if _, err := backendNamed("kube-vip"); err == nil || !strings.Contains(err.Error(), "cilium, metallb") {
		t.Errorf("an unknown driver: %v, want an error listing cilium, metallb", err)
	}
}

func TestMarkdownShowsRefusedWritesByResource(t *testing.T) {
	res := result("b-metallb", 10, true)
	res.Writes = map[string]float64{"PATCH ipaddresses/status": 2.5, "POST services": 1}
	res.Conflicts = map[string]float64{"PATCH ipaddresses/status": 0.5}
	reportHas(t, &Report{Sizes: []Size{{N: 10, Scenarios: []Result{res}}}},
		"| PATCH ipaddresses/status | 2.50 (0.50) |", "| POST services | 1.00 |")
}

// TestMarkdownShowsTheDriversMemoryLimit: a run with -driver-memory-limit says
// so in its settings, and each manager's memory cell shows the limit its
// runtime reported beside its live heap.
func TestMarkdownShowsTheDriversMemoryLimit(t *testing.T) {
	res := result("b-metallb", 10, true)
	res.Processes = map[string]ProcStats{
		procCore:   {PeakRSSMiB: 70, CPUSeconds: 2, LiveHeapMiB: 15},
		procDriver: {PeakRSSMiB: 200, CPUSeconds: 3, LiveHeapMiB: 90, MemoryLimitMiB: 256},
	}
	for _, tc := range []struct {
		name     string
		settings Settings
		want     []string
	}{
		{"without", Settings{DriverConcurrency: 4}, []string{"driver --concurrency=4, no memory limit\n"}},
		{"with", Settings{DriverConcurrency: 4, DriverMemoryLimit: "256Mi"}, []string{"driver --concurrency=4, memory limit 256Mi\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reportHas(t, &Report{Settings: tc.settings, Sizes: []Size{{N: 100, Scenarios: []Result{res}}}},
				append(tc.want, "| 70 / 2.0 (live 15) |", "| 200 / 3.0 (live 90, limit 256) |")...)
		})
	}
}

func TestMemoryLimitBytes(t *testing.T) {
	for in, want := range map[string]string{"": "", "256Mi": "268435456", "1Gi": "1073741824", "268435456": "268435456", "500M": "500000000"} {
		if got, err := memoryLimitBytes(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"256MiB", "-1", "0", "lots", "256 Mi"} {
		if _, err := memoryLimitBytes(bad); err == nil {
			t.Errorf("%q taken, want it refused: it is not a positive Kubernetes quantity", bad)
		}
	}
}

func TestValidScenarios(t *testing.T) {
	for _, ok := range [][]string{nil, {"a"}, {"b", "c"}, {"c", "b", "d"}, {"w"}, {"a", "b", "c", "d", "w"}} {
		if err := validScenarios(ok); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"c"}, {"a", "d"}, {"e"}, {"b", ""}} {
		if err := validScenarios(bad); err == nil {
			t.Errorf("%v taken, want it refused: an unknown letter, or c or d without b", bad)
		}
	}
}
