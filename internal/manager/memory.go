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
	"fmt"
	"runtime/debug"
	"strconv"
)

// MemoryLimitEnv names the variable through which the charts pass the
// container's memory limit, in bytes, to the manager.
const MemoryLimitEnv = "MEMORY_LIMIT"

// memoryReserve is the part of the container's memory limit left to what the
// Go runtime does not count: mostly the binary's own pages, about 45 MiB of
// the driver's RSS (docs/performance.md).
const memoryReserve = 64 << 20

// goMemoryLimit is the Go runtime's soft memory limit for a container limit
// of limit bytes: the limit less memoryReserve, and no less than half of it.
func goMemoryLimit(limit int64) int64 {
	return max(limit-memoryReserve, limit/2)
}

// applyMemoryLimit gives the Go runtime a soft memory limit derived from the
// container's (MemoryLimitEnv), so that it collects garbage harder before the
// container reaches its limit. GOMEMLIMIT, when set, wins: the runtime
// applied it already. It returns the limit it set, 0 when it set none.
func applyMemoryLimit(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	s := getenv(MemoryLimitEnv)
	if s == "" {
		return 0, nil
	}
	limit, err := strconv.ParseInt(s, 10, 64)
	if err != nil || limit <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive number of bytes", MemoryLimitEnv, s)
	}
	soft := goMemoryLimit(limit)
	debug.SetMemoryLimit(soft)
	return soft, nil
}
