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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/test/runkit"
)

func main() {
	var (
		names    = flag.String("presets", "issue19,issue13", "Comma-separated presets to run, in order ("+presetNames()+").")
		out      = flag.String("out", "bin/chaos.json", "Where to write the JSON report.")
		families = flag.String("families", "", "Override the presets' families: comma-separated IPv4, IPv6, Dual.")
		o        Config
	)
	flag.IntVar(&o.Claims, "claims", 0, "Override the presets' number of claims.")
	flag.IntVar(&o.Services, "services", -1, "Override the presets' number of Services naming a claim.")
	flag.IntVar(&o.Rebuilds, "rebuilds", -1, "Override how many Services are deleted and rebuilt.")
	flag.IntVar(&o.Toggles, "toggles", -1, "Override how many Services have their annotation removed and re-added.")
	flag.IntVar(&o.Moves, "moves", -1, "Override how many Services hand their claim to a new Service.")
	flag.IntVar(&o.ClaimDeletions, "claim-deletions", -1, "Override how many claims are deleted.")
	flag.IntVar(&o.EarlyDeletions, "early-deletions", -1, "Override how many claims are deleted a moment after their creation.")
	flag.DurationVar(&o.Duration, "duration", 0, "Override how long the kills go on.")
	flag.Float64Var(&o.StaticShare, "static", -1, "Override the fraction of claims in the static class.")
	flag.Float64Var(&o.RetainShare, "retain", -1, "Override the fraction of claims in the driver's class with Retain.")
	flag.DurationVar(&o.Converge, "converge", 0, "Override how soon after the last kill everything must have converged (the presets': 60 s; cilium's 30 s; issue13's and issue19's 30 s after MetalLB's own catch-up).")
	flag.DurationVar(&o.Patience, "patience", 0, "Override how long to keep measuring past -converge (the presets': 2 minutes, issue13's and issue19's 4).")
	flag.IntVar(&o.Workers, "workers", 0, "Cap on the workload operations in flight; 0: each starts at its time.")
	flag.Int64Var(&o.Seed, "seed", 0, "Seed of the workload's choices and the kills; 0 picks one.")
	flag.BoolVar(&o.KeepDir, "keep", false, "Keep every run's cluster folder (logs); a failed run's is always kept.")
	noAlone := flag.Bool("no-metallb-alone", false, "Skip the run of MetalLB alone that the issue13 and issue19 presets add after the product's (docs/chaos.md, \"MetalLB alone\").")
	flag.Parse()
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))

	var runs []Config
	for name := range strings.SplitSeq(*names, ",") {
		p, ok := presets[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(os.Stderr, "chaos: no preset %q (have %s)\n", name, presetNames())
			os.Exit(2)
		}
		p.Name = strings.TrimSpace(name)
		if err := override(&p, o, *families); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			os.Exit(2)
		}
		p.MetalLBAlone = p.MetalLBAlone && !*noAlone
		p.Log = runkit.Logf
		runs = append(runs, p)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var results []*Result
	failed := false
	for _, cfg := range runs {
		res, err := Run(ctx, cfg)
		if res != nil {
			results = append(results, res)
			failed = failed || res.Failed()
		}
		if err == nil && ctx.Err() == nil && cfg.MetalLBAlone {
			res.MetalLBAlone, err = runAlone(ctx, cfg, res.metallbKills())
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos: run %s: %v\n", cfg.Name, err)
			failed = true
			break
		}
		// Interrupted: report what ran, start nothing more.
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "chaos: interrupted after run %s\n", cfg.Name)
			failed = true
			break
		}
	}
	markdown(os.Stdout, results)
	if err := runkit.WriteJSON(*out, results); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
}

// override applies the flags given on top of a preset.
func override(p *Config, o Config, families string) error {
	if o.Claims > 0 {
		p.Claims = o.Claims
	}
	for _, f := range []struct{ dst, src *int }{
		{&p.Services, &o.Services}, {&p.Rebuilds, &o.Rebuilds}, {&p.Toggles, &o.Toggles}, {&p.Moves, &o.Moves},
		{&p.ClaimDeletions, &o.ClaimDeletions}, {&p.EarlyDeletions, &o.EarlyDeletions},
	} {
		if *f.src >= 0 {
			*f.dst = *f.src
		}
	}
	if o.Duration > 0 {
		p.Duration = o.Duration
	}
	if o.StaticShare >= 0 || o.RetainShare >= 0 {
		p.StaticShare, p.RetainShare, p.SharesSet = max(o.StaticShare, 0), max(o.RetainShare, 0), true
	}
	if families != "" {
		f, err := parseFamilies(families)
		if err != nil {
			return err
		}
		p.Families = f
	}
	if o.Converge > 0 {
		p.Converge = o.Converge
	}
	if o.Patience > 0 {
		p.Patience = o.Patience
	}
	p.Workers, p.Seed, p.KeepDir = o.Workers, o.Seed, o.KeepDir
	return nil
}
