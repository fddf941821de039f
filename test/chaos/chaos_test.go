//go:build e2e || chaos

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
	"io"
	"testing"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestMain(m *testing.M) {
	// The harness's own watch cache logs nothing worth reading.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	m.Run()
}

// TestChaosShort runs the chaos harness small, the way `make chaos` runs it
// at the issues' sizes: 80 claims across the three classes and the three
// families, 30 Services, rebuilds, toggles and claim deletions, under kills
// of both replicas of each manager and of MetalLB for 45 s. It fails on any
// violated invariant, on non-convergence within 60 s of the last kill, and
// on a workload or kill that could not be done. Then MetalLB alone runs the
// same plan under the same kills of MetalLB (checkAlone).
func TestChaosShort(t *testing.T) {
	res, cfg := runShort(t, "short", t.Logf)
	if res.KillTotal < 5 {
		t.Errorf("%d kills in %s, want at least 5", res.KillTotal, cfg.Duration)
	}
	checkShort(t, res, cfg)
	checkAlone(t, res, cfg)
}

// checkAlone runs MetalLB alone under the short run's kills of MetalLB, as
// the issue13 and issue19 presets do after theirs, and fails the test if
// the run could not be done, did not converge, or MetalLB's log gave no
// catch-up after its last start.
func checkAlone(t *testing.T, res *Result, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kills := res.metallbKills()
	if len(kills) == 0 {
		t.Fatal("the short run killed MetalLB never: nothing to replay")
	}
	alone, err := runAlone(ctx, cfg, kills)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(alone.aloneLine())
	if alone.KillTotal != len(kills) {
		t.Errorf("MetalLB alone: %d kills of MetalLB, want the run's %d", alone.KillTotal, len(kills))
	}
	if want := res.Operations["claim created"]; alone.Operations["claim created"] != want {
		t.Errorf("MetalLB alone: %d claims' operations done, want %d", alone.Operations["claim created"], want)
	}
	if len(alone.WorkloadErrors) > 0 || len(alone.KillErrors) > 0 {
		t.Errorf("MetalLB alone: workload errors %q, kill errors %q", alone.WorkloadErrors, alone.KillErrors)
	}
	if alone.ConvergedAfterLastKillSeconds < 0 {
		t.Errorf("MetalLB alone did not converge: %s", alone.Final)
	}
	if alone.MetalLBCaughtUpAfterStartSeconds < 0 {
		t.Errorf("MetalLB alone: its log shows no catch-up after its last start (%d passes)", alone.MetalLBPassesToCatchUp)
	}
}

// runShort runs preset name, logging with logf, and logs its report; it
// fails the test if the run could not be done.
func runShort(t *testing.T, name string, logf func(string, ...any)) (*Result, Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := presets[name]
	cfg.Name, cfg.Log, cfg.Patience = name, logf, time.Second
	res, err := Run(ctx, cfg)
	if res != nil {
		var md bytes.Buffer
		markdown(&md, []*Result{res})
		t.Log("\n" + md.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return res, cfg
}

// checkShort fails the test if a short run's workload was not all done or
// an invariant did not hold.
func checkShort(t *testing.T, res *Result, cfg Config) {
	t.Helper()
	if res.Operations["claim created"] != cfg.Claims {
		t.Errorf("%d claims created, want %d", res.Operations["claim created"], cfg.Claims)
	}
	if res.Failed() {
		t.Errorf("chaos run failed: %s (see the report above)", res.headline())
	}
}
