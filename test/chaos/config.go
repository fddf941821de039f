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
	"maps"
	"slices"
	"strings"
	"time"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Config is one chaos run: the workload's size, the kills, and how long
// convergence may take.
type Config struct {
	// Name labels the run in the report.
	Name string
	// Cilium puts the Cilium driver (cilium-iad) and the Cilium operator's
	// LB-IPAM under chaos instead of the MetalLB driver and MetalLB: the
	// workload's two driver classes are then Cilium's.
	Cilium bool
	// Claims is how many claims the workload creates.
	Claims int
	// StaticShare and RetainShare are the fractions of the claims in the
	// static class and in the driver's class with reclaimPolicy Retain; the
	// rest go to the driver's class with Delete.
	StaticShare, RetainShare float64
	// SharesSet says the shares were chosen; otherwise 20% static and 30%
	// Retain.
	SharesSet bool
	// Families are cycled through, claim by claim.
	Families []v1alpha1.IPFamily
	// Services name the first claims of the driver's classes, one each.
	Services int
	// Rebuilds of those Services are deleted and created again, naming the
	// same claim; Toggles have their annotation removed and re-added;
	// Moves have it removed while a new Service naming the claim is
	// created (the claim moves to another Service: a takeover).
	Rebuilds, Toggles, Moves int
	// EarlyDeletions more MetalLB claims are created and deleted as soon as
	// the driver asked MetalLB for their addresses: their allocation
	// placeholders and any address recorded for them must go.
	EarlyDeletions int
	// LimitShare, above 0, gives each class an addressesPerNamespace of
	// that share of what the workload asks of it, so that every claim is
	// admitted through a usage ledger the invariants check. At 1 nothing is
	// refused; below, claims compete for the last places and the rest wait
	// (ClassLimitReached) until deletions free some.
	LimitShare float64
	// CoreKills weighs the core among the kills' targets against the
	// driver's and the allocator's (MetalLB or the Cilium operator) 1 each;
	// 0 counts as 1.
	CoreKills int
	// ClaimDeletions claims are deleted, half of them named by a Service
	// when there are enough.
	ClaimDeletions int
	// Duration is how long the kills go on.
	Duration time.Duration
	// KillEvery is the range the pause between two kills is drawn from.
	KillMin, KillMax time.Duration
	// RestartAfter is how long a killed process stays down.
	RestartAfter time.Duration
	// WorkloadShare is the fraction of Duration the workload's operations
	// are spread over.
	WorkloadShare float64
	// Converge is how soon after the last kill (or the workload's last
	// operation, if later) everything must have converged; 0 is 60 s.
	Converge time.Duration
	// FromMetalLBCatchUp counts Converge from the end of MetalLB's own
	// catch-up after its last start (its first full pass with nothing left
	// to retry, read from its log) when that ends later: at sizes where
	// MetalLB alone takes longer than Converge to catch up after a restart,
	// the product is held to what it adds after MetalLB (issue 42).
	FromMetalLBCatchUp bool
	// MetalLBAlone runs MetalLB alone after the product's run, on a cluster
	// of its own: the same workload plan on plain Services, MetalLB killed
	// at the same moments (alone.go). Its catch-up and convergence after it
	// are reported beside the product's (Result.MetalLBAlone).
	MetalLBAlone bool
	// StaticConverge, if set, is how soon after the last kill (or the
	// workload's last operation) the static classes' claims, which the
	// core alone binds, must have settled, whatever the driver's backend
	// is doing.
	StaticConverge time.Duration
	// Patience is how long to keep waiting past Converge, to measure how late
	// a late convergence is.
	Patience time.Duration
	// Workers caps the workload operations in flight; 0 runs each at its
	// time, however many are still running.
	Workers int
	// Seed makes the workload's choices and the kills reproducible.
	Seed int64
	// KeepDir keeps the cluster's folder (logs of every process) after the
	// run; a failed run always keeps it.
	KeepDir bool
	// Log reports progress; nil is silent.
	Log func(format string, args ...any)
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// presets are the sizes the issues ask for.
var presets = map[string]Config{
	// issue13: 1,000 claims, 500 associations and dissociations (250
	// Services created, 60 rebuilt, 65 annotations removed and re-added),
	// kills for five minutes; converged within 30 s of MetalLB's own
	// catch-up.
	"issue13": {Claims: 1000, Services: 250, Rebuilds: 60, Toggles: 65, ClaimDeletions: 20, Duration: 5 * time.Minute,
		Converge: 30 * time.Second, FromMetalLBCatchUp: true, MetalLBAlone: true, StaticConverge: 30 * time.Second, Patience: 4 * time.Minute},
	// issue19: 600 claims, 300 Services, 150 of them rebuilt, 10 claims
	// deleted, kills for 180 s; converged within 30 s of MetalLB's own
	// catch-up.
	"issue19": {Claims: 600, Services: 300, Rebuilds: 150, ClaimDeletions: 10, Duration: 180 * time.Second,
		Converge: 30 * time.Second, FromMetalLBCatchUp: true, MetalLBAlone: true, StaticConverge: 30 * time.Second, Patience: 4 * time.Minute},
	// short: the version inside make test.
	"short": {Claims: 80, Services: 30, Rebuilds: 10, Toggles: 8, Moves: 4, ClaimDeletions: 6, EarlyDeletions: 6,
		LimitShare: 1, Duration: 45 * time.Second},
	// limits: claims compete for a quarter less than they ask while deletions
	// free places, and half the kills hit the core, which admits them: no
	// namespace is ever over a class's limit, and a claim waits only while
	// there is no room.
	"limits": {Claims: 120, Services: 24, Rebuilds: 4, Toggles: 4, Moves: 2, ClaimDeletions: 40, EarlyDeletions: 10,
		LimitShare: 0.75, CoreKills: 2, Duration: 60 * time.Second},
	// cilium: the Cilium driver and operator under chaos, with the static
	// class beside them, converged within the 30 s of the last kill.
	"cilium": {Cilium: true, Claims: 200, Services: 60, Rebuilds: 20, Toggles: 12, Moves: 6, ClaimDeletions: 16, EarlyDeletions: 10,
		LimitShare: 1, Duration: 90 * time.Second, Converge: 30 * time.Second, StaticConverge: 30 * time.Second},
	// cilium-short: the Cilium version inside make test (TestChaosShortCilium),
	// smaller and shorter than short, with short's 60 s limit, which a
	// loaded machine needs more than the 30 s target.
	"cilium-short": {Cilium: true, Claims: 40, Services: 16, Rebuilds: 4, Toggles: 4, Moves: 2, ClaimDeletions: 4, EarlyDeletions: 4,
		LimitShare: 1, Duration: 30 * time.Second},
}

// withDefaults fills what a preset leaves out.
func (c Config) withDefaults() Config {
	if !c.SharesSet {
		c.StaticShare, c.RetainShare = 0.2, 0.3
	}
	if len(c.Families) == 0 {
		c.Families = []v1alpha1.IPFamily{v1alpha1.IPv4, v1alpha1.IPv6, v1alpha1.Dual}
	}
	if c.KillMin == 0 {
		c.KillMin, c.KillMax = 2*time.Second, 5*time.Second
	}
	if c.RestartAfter == 0 {
		c.RestartAfter = time.Second
	}
	if c.WorkloadShare == 0 {
		c.WorkloadShare = 0.7
	}
	if c.Converge == 0 {
		c.Converge = 60 * time.Second
	}
	if c.Patience == 0 {
		c.Patience = 2 * time.Minute
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	return c
}

// validate refuses sizes the workload cannot build.
func (c Config) validate() error {
	driven := c.Claims - int(float64(c.Claims)*c.StaticShare)
	switch {
	case c.Claims <= 0:
		return fmt.Errorf("claims: %d, want at least 1", c.Claims)
	case c.StaticShare < 0 || c.RetainShare < 0 || c.StaticShare+c.RetainShare > 1:
		return fmt.Errorf("static share %.2f and retain share %.2f must be fractions adding up to at most 1", c.StaticShare, c.RetainShare)
	case c.Services > driven:
		return fmt.Errorf("%d Services, but only %d claims of the driver's classes to name", c.Services, driven)
	case c.Rebuilds < 0 || c.Toggles < 0 || c.Moves < 0 || c.EarlyDeletions < 0:
		return fmt.Errorf("rebuilds %d, toggles %d, moves %d, early deletions %d: want none negative", c.Rebuilds, c.Toggles, c.Moves, c.EarlyDeletions)
	case c.Rebuilds+c.Toggles+c.Moves > c.Services:
		return fmt.Errorf("%d rebuilds, %d toggles and %d moves need as many distinct Services, there are %d", c.Rebuilds, c.Toggles, c.Moves, c.Services)
	case c.ClaimDeletions > c.Claims-c.Rebuilds-c.Toggles-c.Moves:
		return fmt.Errorf("%d claim deletions: too many for %d claims", c.ClaimDeletions, c.Claims)
	case c.LimitShare < 0 || c.LimitShare > 1:
		return fmt.Errorf("limit share %.2f: want a fraction between 0 and 1", c.LimitShare)
	case c.Duration <= 0 || c.KillMin <= 0 || c.KillMax < c.KillMin:
		return fmt.Errorf("kills for %s every %s-%s: want positive durations", c.Duration, c.KillMin, c.KillMax)
	}
	return nil
}

// parseFamilies reads "IPv4,IPv6,Dual" (any case).
func parseFamilies(s string) ([]v1alpha1.IPFamily, error) {
	var out []v1alpha1.IPFamily
	for f := range strings.SplitSeq(s, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "ipv4", "v4":
			out = append(out, v1alpha1.IPv4)
		case "ipv6", "v6":
			out = append(out, v1alpha1.IPv6)
		case "dual":
			out = append(out, v1alpha1.Dual)
		default:
			return nil, fmt.Errorf("family %q: want IPv4, IPv6 or Dual", f)
		}
	}
	return out, nil
}

func presetNames() string {
	return strings.Join(slices.Sorted(maps.Keys(presets)), ", ")
}
