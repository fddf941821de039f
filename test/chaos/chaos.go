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
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/address-controller/internal/driver/metallb/catchup"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/test/metallblog"
)

// Result is one run's outcome.
type Result struct {
	// Name is the preset's.
	Name string `json:"name"`
	// Allocator is what the driver under chaos drives: MetalLB or Cilium.
	Allocator string `json:"allocator"`
	// Seed reproduces the run's workload and kills (-seed).
	Seed int64 `json:"seed"`
	Size Size  `json:"size"`
	// Kills counts the processes killed, by party.
	Kills map[string]int `json:"kills"`
	// KillTotal is the sum of Kills.
	KillTotal int `json:"killTotal"`
	// Operations the workload completed, by kind.
	Operations     map[string]int `json:"operations"`
	WorkloadErrors []string       `json:"workloadErrors,omitempty"`
	// LateRebuilds are the rebuilds that stopped waiting for their old
	// Service, left to the convergence check (lateDeletion).
	LateRebuilds []string    `json:"lateRebuilds,omitempty"`
	KillErrors   []string    `json:"killErrors,omitempty"`
	Violations   []Violation `json:"violations"`
	// WatchEvents is how many Service, claim and IPAddress events the
	// invariants were checked on.
	WatchEvents int `json:"watchEvents"`
	// WorkloadEndedBeforeLastKillSeconds is negative when the workload's
	// last operation came after the last kill.
	WorkloadEndedBeforeLastKillSeconds float64 `json:"workloadEndedBeforeLastKillSeconds"`
	// ConvergedAfterSeconds counts from the last kill, or from the
	// workload's last operation if that came later; -1 if never.
	ConvergedAfterSeconds float64 `json:"convergedAfterSeconds"`
	// ConvergedAfterLastKillSeconds counts from the last kill alone; -1 if
	// never.
	ConvergedAfterLastKillSeconds float64 `json:"convergedAfterLastKillSeconds"`
	// ConvergedAfterKillsBeganSeconds counts from the start of the kills
	// and the workload, the clock the product's run and MetalLB alone's
	// share; -1 if never.
	ConvergedAfterKillsBeganSeconds float64 `json:"convergedAfterKillsBeganSeconds"`
	// MetalLB's last start, from its log (docs/chaos.md, Convergence):
	// seconds from the last kill to it (negative when it came before), to
	// the end of its first full pass with nothing left to retry (from
	// which on it handles single Services' events; -1 if none did) and the
	// passes that took, and from that end to convergence (-1 if either
	// never came).
	MetalLBStartedAfterLastKillSeconds   float64 `json:"metallbStartedAfterLastKillSeconds"`
	MetalLBCaughtUpAfterStartSeconds     float64 `json:"metallbCaughtUpAfterStartSeconds"`
	MetalLBPassesToCatchUp               int     `json:"metallbPassesToCatchUp"`
	ConvergedAfterMetalLBCaughtUpSeconds float64 `json:"convergedAfterMetalLBCaughtUpSeconds"`
	// MetalLB's full passes after its catch-up and by convergence (one for
	// each change of an allocation key or deletion of an assigned Service,
	// spaced by its queue's backoff), and from the end of the last of all
	// its passes by then to convergence.
	MetalLBPassesAfterCatchUp            int     `json:"metallbPassesAfterCatchUp"`
	ConvergedAfterMetalLBLastPassSeconds float64 `json:"convergedAfterMetalLBLastPassSeconds"`
	// MetalLB's Service status writes from its catch-up to convergence, and
	// the least time its client takes to send them at its fixed rate
	// (metallblog.ClientRate): MetalLB's own share of the wait after its
	// catch-up, measured in the same run.
	MetalLBStatusWritesAfterCatchUp int     `json:"metallbStatusWritesAfterCatchUp"`
	MetalLBWriteSecondsAfterCatchUp float64 `json:"metallbWriteSecondsAfterCatchUp"`
	// MetalLBWritesAfterCatchUp sorts those writes by what MetalLB was
	// doing: its full passes, or a single Service's event, by the Service.
	MetalLBWritesAfterCatchUp *WritesByRole `json:"metallbWritesAfterCatchUp,omitempty"`
	// StaticConvergedAfterLastKillSeconds and StaticConvergedAfterSeconds:
	// from the last kill, and from the later of it and the workload's last
	// operation (where the wait for convergence begins), to the moment that
	// wait last saw the static classes' claims, which the core alone binds,
	// settle (-1 if they had not when it ended; 0 after the later moment if
	// they were settled when the wait began); StaticLimitSeconds is the
	// limit on the second (0: none).
	StaticConvergedAfterLastKillSeconds float64 `json:"staticConvergedAfterLastKillSeconds"`
	StaticConvergedAfterSeconds         float64 `json:"staticConvergedAfterSeconds"`
	StaticLimitSeconds                  float64 `json:"staticLimitSeconds,omitempty"`
	// CiliumLeadingAfterLastKillSeconds: from the last kill to the Cilium
	// operator's last taking of its lease, from which on its LB-IPAM runs
	// (negative when it came before); Cilium runs only.
	CiliumLeadingAfterLastKillSeconds float64 `json:"ciliumLeadingAfterLastKillSeconds,omitempty"`
	// Converged is true when convergence came within LimitSeconds of
	// LimitFrom.
	Converged    bool    `json:"converged"`
	LimitSeconds float64 `json:"limitSeconds"`
	// LimitFrom says what the limit counts from: the later of the last
	// kill and the workload's last operation, or MetalLB's catch-up
	// (Config.FromMetalLBCatchUp) when that ended later.
	LimitFrom      string         `json:"limitFrom"`
	Final          string         `json:"final"`
	Events         map[string]int `json:"events"`
	DurationSecond float64        `json:"durationSeconds"`
	// MetalLBKillSeconds: how long after the kills began each kill of
	// MetalLB came.
	MetalLBKillSeconds []float64 `json:"metallbKillSeconds,omitempty"`
	// MetalLBAlone is MetalLB alone under the same kills of MetalLB and the
	// same workload on plain Services (Config.MetalLBAlone, alone.go): its
	// catch-up and its convergence after it, MetalLB's own figure.
	MetalLBAlone *Result `json:"metallbAlone,omitempty"`
	// Dir is the cluster's folder, kept with every log when the run failed
	// or -keep was given.
	Dir string `json:"dir,omitempty"`
}

// Size is what the run asked for.
type Size struct {
	Claims, Services, Rebuilds, Toggles, Moves, ClaimDeletions, EarlyDeletions int
	Families                                                                   string
	StaticShare, RetainShare                                                   float64
	KillSeconds                                                                float64
	// LimitShare: the classes' addressesPerNamespace, as a share of what
	// the workload asks (Config.LimitShare); 0 for none.
	LimitShare float64
}

// Failed says whether the run broke an invariant, did not converge in time,
// or could not do its workload or its kills.
func (r *Result) Failed() bool {
	return len(r.Violations) > 0 || !r.Converged || len(r.WorkloadErrors) > 0 || len(r.KillErrors) > 0
}

// Run starts a cluster, runs the workload under kills, waits for
// convergence, and stops everything.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	families := make([]string, len(cfg.Families))
	for i, f := range cfg.Families {
		families[i] = string(f)
	}
	res = &Result{Name: cfg.Name, Allocator: cfg.backend().name, Seed: cfg.Seed, LimitSeconds: cfg.Converge.Seconds(),
		ConvergedAfterSeconds: -1, ConvergedAfterLastKillSeconds: -1,
		Size: Size{Claims: cfg.Claims, Services: cfg.Services, Rebuilds: cfg.Rebuilds, Toggles: cfg.Toggles, Moves: cfg.Moves,
			ClaimDeletions: cfg.ClaimDeletions, EarlyDeletions: cfg.EarlyDeletions, Families: strings.Join(families, ","),
			StaticShare: cfg.StaticShare, RetainShare: cfg.RetainShare, KillSeconds: cfg.Duration.Seconds(), LimitShare: cfg.LimitShare}}
	began := time.Now()
	e, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { e.finish(res, began, err != nil || res.Failed()) }()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := plan(e, cfg.Seed)
	chk, err := e.checker(ctx, w)
	if err != nil {
		return res, err
	}
	events := &eventCounter{n: map[string]int{}}
	if err := watch(wctx, e, chk, events); err != nil {
		return res, err
	}
	mk := &allocatorKills{}
	tail := &logTail{path: e.cluster.MetalLBLog()}
	if !cfg.Cilium {
		chk.handled = tail.handledAfter
	}
	go sampleAbilities(wctx, e, chk.abilities, mk, tail)
	go sweepEverySecond(wctx, chk)
	cfg.logf("Creating the classes and %s's static addresses", classes[2].name)
	if err := w.setup(ctx); err != nil {
		return res, err
	}

	cfg.logf("Kills for %s, %d workload operations over %s", cfg.Duration, len(w.ops),
		time.Duration(float64(cfg.Duration)*cfg.WorkloadShare).Round(time.Second))
	k := newKiller(e, cfg.Seed, mk)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, time.Duration(float64(cfg.Duration)*cfg.WorkloadShare)) })
	k.run(ctx, cfg.Duration)
	wg.Wait()
	kills, lastKill, killErrs := k.summary()
	res.Kills, res.KillErrors = kills, killErrs
	if !cfg.Cilium {
		for _, d := range k.allocatorKillTimes() {
			res.MetalLBKillSeconds = append(res.MetalLBKillSeconds, d.Seconds())
		}
	}
	for _, n := range kills {
		res.KillTotal += n
	}
	res.Operations, res.WorkloadErrors, res.LateRebuilds = w.summary(), w.errors(), w.lateRebuilds()
	res.WorkloadEndedBeforeLastKillSeconds = lastKill.Sub(w.done).Seconds()
	from := lastKill
	if w.done.After(from) {
		from = w.done
	}
	cfg.logf("Last kill at %s (%d kills): waiting for convergence", lastKill.Format("15:04:05"), res.KillTotal)

	converged, static, p := waitConverged(ctx, cfg, chk, from)
	res.Final = p.String()
	res.StaticConvergedAfterLastKillSeconds, res.StaticConvergedAfterSeconds = -1, -1
	if !static.IsZero() {
		res.StaticConvergedAfterLastKillSeconds = static.Sub(lastKill).Seconds()
		res.StaticConvergedAfterSeconds = static.Sub(from).Seconds()
	}
	var caughtUp time.Time
	if cfg.Cilium {
		res.readCilium(ctx, e, lastKill)
	} else {
		caughtUp = res.readMetalLB(e.cluster.MetalLBLog(), lastKill, converged)
	}
	res.judge(cfg, k.began, lastKill, from, converged, caughtUp)
	if cfg.StaticConverge > 0 && cfg.StaticShare > 0 {
		res.StaticLimitSeconds = cfg.StaticConverge.Seconds()
		res.Converged = res.Converged && !static.IsZero() && static.Sub(from) <= cfg.StaticConverge
	}
	chk.finalCheck()
	res.Violations, res.WatchEvents = chk.result()
	res.Events = events.counts()
	cfg.logf("Run %s: %d kills, %d violations, converged=%v after %.1fs: %s",
		cfg.Name, res.KillTotal, len(res.Violations), res.Converged, res.ConvergedAfterSeconds, res.Final)
	return res, nil
}

// finish records how long the run took and stops its cluster, keeping its
// folder if keep or -keep says so.
func (e *env) finish(res *Result, began time.Time, keep bool) {
	res.DurationSecond = time.Since(began).Seconds()
	keep = keep || e.cfg.KeepDir
	if keep {
		res.Dir = e.cluster.Dir
	}
	e.stop(keep)
}

// judge records when the run converged (zero: never), counted from the
// start of the kills, from the last kill and from from, the later of it and
// the workload's last operation, and whether that came within the limit
// (limitFrom).
func (r *Result) judge(cfg Config, began, lastKill, from, converged, caughtUp time.Time) {
	var anchor time.Time
	anchor, r.LimitFrom = limitFrom(cfg, from, caughtUp)
	r.ConvergedAfterKillsBeganSeconds = -1
	if !converged.IsZero() {
		r.ConvergedAfterKillsBeganSeconds = converged.Sub(began).Seconds()
		r.ConvergedAfterSeconds = converged.Sub(from).Seconds()
		r.ConvergedAfterLastKillSeconds = converged.Sub(lastKill).Seconds()
		r.Converged = converged.Sub(anchor) <= cfg.Converge
	}
}

// metallbKills is when MetalLB was killed, after the kills began.
func (r *Result) metallbKills() []time.Duration {
	at := make([]time.Duration, len(r.MetalLBKillSeconds))
	for i, s := range r.MetalLBKillSeconds {
		at[i] = time.Duration(s * float64(time.Second))
	}
	return at
}

// limitFrom is when a run's convergence limit starts, and what that moment
// is: from, the later of the last kill and the workload's last operation,
// or the end of MetalLB's catch-up when the preset counts from it
// (Config.FromMetalLBCatchUp) and it ended later.
func limitFrom(cfg Config, from, metallbCaughtUp time.Time) (time.Time, string) {
	if cfg.FromMetalLBCatchUp && metallbCaughtUp.After(from) {
		return metallbCaughtUp, "the end of MetalLB's own catch-up"
	}
	return from, "the later of the last kill and the workload's last operation"
}

// checker makes the run's checker: keyed with the placeholder namespace's
// UID, as the driver's marks are, and told which classes the driver holds
// and what limits the workload's classes set.
func (e *env) checker(ctx context.Context, w *workload) (*checker, error) {
	ns := &corev1.Namespace{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: e.b.placeholderNamespace}, ns); err != nil {
		return nil, err
	}
	chk := newChecker(secret(ns.UID))
	chk.b = e.b
	for _, cl := range classes {
		chk.heldClasses[cl.name] = cl.driven
	}
	maps.Copy(chk.limits, w.limits)
	return chk, nil
}

// sweepEverySecond checks the bounded invariants while the run goes on.
func sweepEverySecond(ctx context.Context, chk *checker) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			chk.sweep()
		}
	}
}

// readCilium reads when the Cilium operator last took its lease.
func (r *Result) readCilium(ctx context.Context, e *env, lastKill time.Time) {
	if acquired, ok := ciliumAcquired(ctx, e); ok {
		r.CiliumLeadingAfterLastKillSeconds = acquired.Sub(lastKill).Seconds()
	}
}

// readMetalLB fills in what MetalLB's log says of its last start, and
// returns when its catch-up after that start ended (zero if it never did).
func (r *Result) readMetalLB(path string, lastKill, converged time.Time) time.Time {
	r.MetalLBCaughtUpAfterStartSeconds, r.ConvergedAfterMetalLBCaughtUpSeconds = -1, -1
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}
	}
	defer func() { _ = f.Close() }()
	c := metallblog.Read(f)
	if c.Started.IsZero() {
		return time.Time{}
	}
	r.MetalLBStartedAfterLastKillSeconds = c.Started.Sub(lastKill.Truncate(time.Second)).Seconds()
	r.MetalLBPassesToCatchUp = c.Passes
	if c.CaughtUp.IsZero() {
		return time.Time{}
	}
	r.MetalLBCaughtUpAfterStartSeconds = c.CaughtUp.Sub(c.Started).Seconds()
	if !converged.IsZero() {
		r.ConvergedAfterMetalLBCaughtUpSeconds = converged.Sub(c.CaughtUp).Seconds()
		if end, after := c.LastPassBy(converged); !end.IsZero() {
			r.ConvergedAfterMetalLBLastPassSeconds, r.MetalLBPassesAfterCatchUp = converged.Sub(end).Seconds(), after
		}
		r.MetalLBStatusWritesAfterCatchUp = c.StatusWritesBetween(c.CaughtUp, converged)
		r.MetalLBWriteSecondsAfterCatchUp = float64(r.MetalLBStatusWritesAfterCatchUp) / metallblog.ClientRate
		r.MetalLBWritesAfterCatchUp = byRole(c.WritesBetween(c.CaughtUp, converged))
	}
	return c.CaughtUp
}

// WritesByRole counts MetalLB's Service status writes by what it was
// doing: a full pass, or the event of one Service, by the Service's role.
// Failed counts those of any kind the API server refused.
type WritesByRole struct {
	FullPasses             int `json:"fullPasses"`
	AllocationPlaceholders int `json:"allocationPlaceholders"`
	Holds                  int `json:"holds"`
	Probes                 int `json:"probes"`
	// Workload: Services outside the placeholders' namespace.
	Workload int `json:"workload"`
	// Other: the placeholders' namespace's other Services.
	Other  int `json:"other"`
	Failed int `json:"failed"`
}

// byRole sorts writes by the role of the Services they were for, read from
// the MetalLB driver's names.
func byRole(w metallblog.Writes) *WritesByRole {
	r := &WritesByRole{FullPasses: w.InPasses, Failed: w.Failed}
	for key, n := range w.Alone {
		ns, name, _ := strings.Cut(key, "/")
		switch {
		case ns != placeholderNamespace:
			r.Workload += n
		case strings.HasPrefix(name, placeholder.AllocationPrefix):
			r.AllocationPlaceholders += n
		case strings.HasPrefix(name, placeholder.HoldPrefix):
			r.Holds += n
		case strings.HasPrefix(name, catchup.ProbePrefix):
			r.Probes += n
		default:
			r.Other += n
		}
	}
	return r
}

// waitConverged waits until the cluster has converged and stayed so for
// three seconds, or until the limit and the patience after it have passed.
// It returns when convergence began (zero if it never did), when the static
// classes' claims had last settled by then (zero if they had not), and the
// last progress seen.
func waitConverged(ctx context.Context, cfg Config, chk *checker, from time.Time) (all, static time.Time, last progress) {
	all, _ = waitStable(ctx, cfg, from, "", func(now time.Time) (bool, string) {
		chk.sweep()
		last = chk.progress()
		switch {
		case last.StaticUnsettled > 0:
			static = time.Time{}
		case static.IsZero():
			static = now
		}
		return last.converged(), last.String()
	})
	return all, static, last
}

// waitStable calls settled every quarter second until it has said true for
// three seconds in a row, or until the limit and the patience after it have
// passed from from, logging its state (after label) every ten seconds. It
// returns when the last run of trues began (zero if none lasted) and the
// last state.
func waitStable(ctx context.Context, cfg Config, from time.Time, label string,
	settled func(now time.Time) (bool, string)) (time.Time, string) {
	const stable = 3 * time.Second
	deadline := from.Add(cfg.Converge + cfg.Patience)
	var since time.Time
	lastLog := time.Now()
	for {
		now := time.Now()
		done, state := settled(now)
		switch {
		case !done:
			since = time.Time{}
		case since.IsZero():
			since = now
		case now.Sub(since) >= stable:
			return since, state
		}
		if now.After(deadline) {
			return time.Time{}, state
		}
		if now.Sub(lastLog) >= 10*time.Second {
			cfg.logf("%s%.0fs after the last kill or workload operation: %s", label, now.Sub(from).Seconds(), state)
			lastLog = now
		}
		select {
		case <-ctx.Done():
			return time.Time{}, state
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// headline sums a run up in one line, for a failed test to name.
//
//nolint:unused // Called from chaos_test.go, which only the e2e and chaos build tags compile.
func (r *Result) headline() string {
	return fmt.Sprintf("%s: %d kills, %d violations, converged %v", r.Name, r.KillTotal, len(r.Violations), r.Converged)
}
