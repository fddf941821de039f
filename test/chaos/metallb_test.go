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
	"strings"
	"testing"
	"time"
)

// TestLimitFromCountsFromMetalLBsCatchUpOnlyWhenAskedAndLater: a preset
// that counts from MetalLB's catch-up does so only when the catch-up ended
// after the last kill and the workload; any other run counts from those.
func TestLimitFromCountsFromMetalLBsCatchUpOnlyWhenAskedAndLater(t *testing.T) {
	from := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
	later, earlier := from.Add(80*time.Second), from.Add(-5*time.Second)
	for _, tc := range []struct {
		name     string
		asked    bool
		caughtUp time.Time
		want     time.Time
	}{
		{"asked, catch-up later", true, later, later},
		{"asked, catch-up earlier", true, earlier, from},
		{"asked, no catch-up", true, time.Time{}, from},
		{"not asked, catch-up later", false, later, from},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, what := limitFrom(Config{FromMetalLBCatchUp: tc.asked}, from, tc.caughtUp)
			if !got.Equal(tc.want) {
				t.Errorf("limitFrom = %s (%s), want %s", got.Format(time.TimeOnly), what, tc.want.Format(time.TimeOnly))
			}
			if catchUp := strings.Contains(what, "MetalLB"); catchUp != got.Equal(later) {
				t.Errorf("limitFrom says %q for %s", what, got.Format(time.TimeOnly))
			}
		})
	}
}

// TestOverrideKeepsThePresetsPatience: a flag left at its default changes
// nothing; one given replaces the preset's value.
func TestOverrideKeepsThePresetsPatience(t *testing.T) {
	unset := Config{Services: -1, Rebuilds: -1, Toggles: -1, Moves: -1, ClaimDeletions: -1, EarlyDeletions: -1, StaticShare: -1, RetainShare: -1}
	p := presets["issue19"]
	if err := override(&p, unset, ""); err != nil {
		t.Fatal(err)
	}
	if p.Patience != presets["issue19"].Patience || p.Converge != presets["issue19"].Converge {
		t.Errorf("no flag given: patience %s, converge %s; want the preset's %s, %s", p.Patience, p.Converge, presets["issue19"].Patience, presets["issue19"].Converge)
	}
	given := unset
	given.Patience = 7 * time.Minute
	if err := override(&p, given, ""); err != nil {
		t.Fatal(err)
	}
	if p.Patience != 7*time.Minute {
		t.Errorf("-patience 7m: patience %s", p.Patience)
	}
}
