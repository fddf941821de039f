//go:build (e2e || chaos) && cilium

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
	"testing"
	"time"
)

// TestChaosShortCilium is TestChaosShort for the Cilium driver: the core and
// cilium-iad, two replicas each with leader election, and the real Cilium
// operator's LB-IPAM, under kills of all three for 30 s, with 40 claims
// across the two Cilium classes and the static class, Services, rebuilds,
// toggles, moves and deletions (the cilium-short preset). It fails on any
// violated invariant, Cilium's own among them, on non-convergence within 60
// s of the last kill, and on a workload or kill that could not be done. It
// needs the Cilium operator (CILIUM_ASSETS, `make cilium`).
func TestChaosShortCilium(t *testing.T) {
	began := time.Now()
	logf := func(format string, args ...any) {
		t.Logf("%5.1fs "+format, append([]any{time.Since(began).Seconds()}, args...)...)
	}
	res, cfg := runShort(t, "cilium-short", logf)
	if res.KillTotal < 4 {
		t.Errorf("%d kills in %s, want at least 4", res.KillTotal, cfg.Duration)
	}
	if res.Kills[killCilium] == 0 {
		t.Errorf("kills %v: the Cilium operator was never killed", res.Kills)
	}
	checkShort(t, res, cfg)
}
