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
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/cozystack/address-controller/test/metallblog"
)

// reportedEvents are the Event reasons worth reading after a chaos run.
var reportedEvents = []string{
	"AddressConflict", "ConflictResolved", "Yielded", "AddressContested", "LedgerMismatch",
	"AssociationRefused", "AddressLost", "AllocationFailed",
}

// markdown prints the runs as a table, then each run's violations, errors
// and final state.
func markdown(w io.Writer, results []*Result) {
	_, _ = fmt.Fprintln(w, "| run | claims | Services (rebuilt, toggled) | claims deleted | kills | core leader/follower | driver leader/follower | allocator (MetalLB or Cilium operator) | violations | converged after last kill | within limit |")
	_, _ = fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		conv := "never"
		if r.ConvergedAfterLastKillSeconds >= 0 {
			conv = fmt.Sprintf("%.1f s", r.ConvergedAfterLastKillSeconds)
		}
		_, _ = fmt.Fprintf(w, "| %s | %d | %d (%d, %d) | %d | %d | %d/%d | %d/%d | %d | %d | %s | %v (%.0f s) |\n",
			r.Name, r.Size.Claims, r.Size.Services, r.Size.Rebuilds, r.Size.Toggles, r.Size.ClaimDeletions, r.KillTotal,
			r.Kills[killCoreLeader], r.Kills[killCoreFollower], r.Kills[killDriverLeader], r.Kills[killDriverFollower],
			r.Kills[killMetalLB]+r.Kills[killCilium], len(r.Violations), conv, r.Converged, r.LimitSeconds)
	}
	for _, r := range results {
		_, _ = fmt.Fprintf(w, "\n**%s** (%s; seed %d, families %s, %.0f%% static, %.0f%% Retain, %.0f s of kills, run took %.0f s)\n\n",
			r.Name, r.Allocator, r.Seed, r.Size.Families, 100*r.Size.StaticShare, 100*r.Size.RetainShare, r.Size.KillSeconds, r.DurationSecond)
		_, _ = fmt.Fprintf(w, "- operations: %s (moves %d, claims deleted early %d, class limits at %.0f%% of the demand)\n",
			counts(r.Operations), r.Size.Moves, r.Size.EarlyDeletions, 100*r.Size.LimitShare)
		_, _ = fmt.Fprintf(w, "- invariants checked on %d watch events\n", r.WatchEvents)
		_, _ = fmt.Fprintf(w, "- the workload's last operation ended %s the last kill\n", beforeAfter(-r.WorkloadEndedBeforeLastKillSeconds))
		if r.ConvergedAfterSeconds >= 0 {
			_, _ = fmt.Fprintf(w, "- converged %.1f s after the later of the last kill and the workload's last operation, %.1f s after the kills began (limit %.0f s from %s)\n",
				r.ConvergedAfterSeconds, r.ConvergedAfterKillsBeganSeconds, r.LimitSeconds, r.LimitFrom)
		}
		if r.StaticConvergedAfterSeconds >= 0 {
			limit := ""
			if r.StaticLimitSeconds > 0 {
				limit = fmt.Sprintf(" (limit %.0f s)", r.StaticLimitSeconds)
			}
			_, _ = fmt.Fprintf(w, "- the static classes' claims settled %.1f s after the later of the last kill and the workload's last operation%s, %.1f s after the last kill\n",
				r.StaticConvergedAfterSeconds, limit, r.StaticConvergedAfterLastKillSeconds)
		} else {
			_, _ = fmt.Fprintln(w, "- the static classes' claims had not settled when the run ended")
		}
		if r.Allocator == ciliumBackend.name {
			_, _ = fmt.Fprintf(w, "- the Cilium operator last took its lease %.1f s after the last kill\n", r.CiliumLeadingAfterLastKillSeconds)
		} else {
			_, _ = fmt.Fprintf(w, "- MetalLB's last start: %s the last kill; %s\n", beforeAfter(r.MetalLBStartedAfterLastKillSeconds), r.catchUpLine())
		}
		if a := r.MetalLBAlone; a != nil {
			_, _ = fmt.Fprintf(w, "- %s\n", a.aloneLine())
		}
		ev := map[string]int{}
		for _, reason := range reportedEvents {
			if n := r.Events[reason]; n > 0 {
				ev[reason] = n
			}
		}
		_, _ = fmt.Fprintf(w, "- events: %s\n", counts(ev))
		_, _ = fmt.Fprintf(w, "- final: %s\n", r.Final)
		for _, v := range r.Violations {
			_, _ = fmt.Fprintf(w, "- VIOLATION at %s, %s: %s\n", v.At.Format("15:04:05.000"), v.Invariant, v.Detail)
		}
		for _, e := range r.WorkloadErrors {
			_, _ = fmt.Fprintf(w, "- workload error: %s\n", e)
		}
		for _, e := range r.LateRebuilds {
			_, _ = fmt.Fprintf(w, "- rebuild left to the convergence check: %s\n", e)
		}
		for _, e := range r.KillErrors {
			_, _ = fmt.Fprintf(w, "- kill error: %s\n", e)
		}
		if r.Dir != "" {
			_, _ = fmt.Fprintf(w, "- logs kept in %s\n", r.Dir)
		}
	}
}

// catchUpLine says when MetalLB handled single events again and when the
// run converged after that.
func (r *Result) catchUpLine() string {
	if r.MetalLBCaughtUpAfterStartSeconds < 0 {
		return fmt.Sprintf("no full pass with nothing left to retry after it (%d passes)", r.MetalLBPassesToCatchUp)
	}
	line := fmt.Sprintf("single events handled again %.0f s after it, at the end of full pass %d", r.MetalLBCaughtUpAfterStartSeconds, r.MetalLBPassesToCatchUp)
	if r.ConvergedAfterMetalLBCaughtUpSeconds >= 0 {
		line += fmt.Sprintf("; converged %.0f s after that, and %.0f s after the end of MetalLB's last full pass by then (%d full passes after the catch-up)",
			r.ConvergedAfterMetalLBCaughtUpSeconds, r.ConvergedAfterMetalLBLastPassSeconds, r.MetalLBPassesAfterCatchUp)
		line += fmt.Sprintf("; MetalLB wrote %d Service statuses from its catch-up to convergence, %.0f s at its client's %d requests/s",
			r.MetalLBStatusWritesAfterCatchUp, r.MetalLBWriteSecondsAfterCatchUp, metallblog.ClientRate)
		if w := r.MetalLBWritesAfterCatchUp; w != nil && r.MetalLBStatusWritesAfterCatchUp > 0 {
			line += fmt.Sprintf(" (%d in full passes; for single events, %d of allocation placeholders, %d of holds, %d of workload Services, %d of probes, %d of others; %d of them refused)",
				w.FullPasses, w.AllocationPlaceholders, w.Holds, w.Workload, w.Probes, w.Other, w.Failed)
		}
	}
	return line
}

// aloneLine sums up MetalLB alone's run (runAlone).
func (r *Result) aloneLine() string {
	conv := "did not converge"
	if r.ConvergedAfterLastKillSeconds >= 0 {
		conv = fmt.Sprintf("converged %.1f s after its last kill of MetalLB, %.1f s after the kills began", r.ConvergedAfterLastKillSeconds, r.ConvergedAfterKillsBeganSeconds)
	}
	line := fmt.Sprintf("MetalLB alone, under the same %d kills of MetalLB, the same plan on %d plain Services (its last operation %s that kill; %s): %s. Its last start: %s that kill; %s",
		r.KillTotal, r.Size.Services, beforeAfter(-r.WorkloadEndedBeforeLastKillSeconds), counts(r.Operations), conv,
		beforeAfter(r.MetalLBStartedAfterLastKillSeconds), r.catchUpLine())
	if r.ConvergedAfterLastKillSeconds >= 0 && r.MetalLBCaughtUpAfterStartSeconds >= 0 && r.ConvergedAfterMetalLBCaughtUpSeconds < 0 {
		line += fmt.Sprintf("; converged %.0f s before that catch-up ended", -r.ConvergedAfterMetalLBCaughtUpSeconds)
	}
	if r.ConvergedAfterLastKillSeconds >= 0 {
		line += fmt.Sprintf(". Within %.0f s of %s: %v", r.LimitSeconds, r.LimitFrom, r.Converged)
	}
	parts := []string{line}
	for _, e := range slices.Concat(r.WorkloadErrors, r.KillErrors) {
		parts = append(parts, "error: "+e)
	}
	if r.Dir != "" {
		parts = append(parts, "logs kept in "+r.Dir)
	}
	return strings.Join(parts, "; ")
}

// beforeAfter says seconds as "n s after", or "n s before" when negative.
func beforeAfter(seconds float64) string {
	if seconds < 0 {
		return fmt.Sprintf("%.1f s before", -seconds)
	}
	return fmt.Sprintf("%.1f s after", seconds)
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
