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

package manager

import (
	"math"
	"runtime/debug"
	"testing"
)

const mib = 1 << 20

func TestTheGoMemoryLimitLeavesTheReserveOrHalfTheContainerLimit(t *testing.T) {
	for _, c := range []struct{ limit, want int64 }{
		{256 * mib, 192 * mib},
		{1024 * mib, 960 * mib},
		{128 * mib, 64 * mib},
		{64 * mib, 32 * mib},
	} {
		if got := goMemoryLimit(c.limit); got != c.want {
			t.Errorf("container limit %d MiB: Go memory limit %d MiB, want %d MiB", c.limit/mib, got/mib, c.want/mib)
		}
	}
}

// env is a process environment for applyMemoryLimit.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestTheContainerMemoryLimitSetsTheRuntimesUnlessGOMEMLIMITDoes(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	debug.SetMemoryLimit(math.MaxInt64)
	soft, err := applyMemoryLimit(env(map[string]string{MemoryLimitEnv: "268435456"}))
	if err != nil || soft != 192*mib {
		t.Fatalf("MEMORY_LIMIT of 256 MiB: got %d, %v; want %d", soft, err, 192*mib)
	}
	if got := debug.SetMemoryLimit(-1); got != 192*mib {
		t.Errorf("the runtime's limit is %d, want %d", got, 192*mib)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	soft, err = applyMemoryLimit(env(map[string]string{MemoryLimitEnv: "268435456", "GOMEMLIMIT": "100MiB"}))
	if err != nil || soft != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: got %d, %v and a runtime limit of %d; want it left alone", soft, err, debug.SetMemoryLimit(-1))
	}

	soft, err = applyMemoryLimit(env(nil))
	if err != nil || soft != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with neither set: got %d, %v and a runtime limit of %d; want it left alone", soft, err, debug.SetMemoryLimit(-1))
	}

	for _, bad := range []string{"256Mi", "-1", "0", "lots"} {
		if _, err := applyMemoryLimit(env(map[string]string{MemoryLimitEnv: bad})); err == nil {
			t.Errorf("MEMORY_LIMIT=%q: want an error", bad)
		}
	}
}
