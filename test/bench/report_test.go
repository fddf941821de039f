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

func TestComparisons(t *testing.T) {
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
			name: "each product scenario against the anchor beside it, every handoff mode",
			scenarios: []Result{
				result(anchorPeer, 20, true), result(anchorAlone, 40, true), result(anchorPinned, 50, true),
				result("a-static", 60, true), result("b-metallb-auto", 10, true), result("c-associate-auto", 5, true),
				result("d-teardown-auto", 9, true), result("b-metallb-gap", 30, true),
			},
			want: []Comparison{
				{Product: "a-static", Anchor: anchorPeer, Ratio: 3, Target: 3},
				{Product: "b-metallb-auto", Anchor: anchorAlone, Ratio: 0.25, Target: 0.5},
				{Product: "c-associate-auto", Anchor: anchorPinned, Ratio: 0.1},
				{Product: "b-metallb-gap", Anchor: anchorAlone, Ratio: 0.75, Target: 0.5},
			},
		},
		{
			name:      "no ratio when either side did not converge",
			scenarios: []Result{result(anchorPeer, 20, false), result("a-static", 60, true)},
			want:      []Comparison{{Product: "a-static", Anchor: anchorPeer, Target: 3}},
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
	size.Scenarios[0].Processes = map[string]ProcStats{procPeer: {PeakRSSMiB: 42, CPUSeconds: 1.5}}
	size.Comparisons = size.comparisons()
	var md bytes.Buffer
	(&Report{Sizes: []Size{size}}).Markdown(&md)
	for _, want := range []string{
		"| 100 | a-static | peer | 60.0 | 20.0 | 3.00 | ≥ 3 |",
		"| peer | 100 | n/a | n/a | n/a | 42 / 1.5 |",
		"| peer | 100 | 0 | yes | 0.0 | 20.0 | 0.00 | 0 | 0 | 2.00 | – | – |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}
