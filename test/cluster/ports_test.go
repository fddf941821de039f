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

package cluster

import "testing"

// TestFreePortNeverHandsOutAPortTwice draws far more ports than it takes
// for two random draws from the range to meet (a manager's metrics and
// pprof ports once did): every one differs, and lies in the range.
func TestFreePortNeverHandsOutAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 1500 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("FreePort returned %d twice in %d draws", port, len(seen)+1)
		}
		if port < portsFrom || port > portsTo {
			t.Fatalf("FreePort returned %d, outside %d-%d", port, portsFrom, portsTo)
		}
		seen[port] = true
	}
}
