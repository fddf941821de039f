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

	"github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/catchup"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/test/metallblog"
)

// TestByRoleSortsMetalLBsWritesByTheDriversNames: a single event's write
// counts by the role the MetalLB driver's names give its Service, a full
// pass's by the pass, and the report says so.
func TestByRoleSortsMetalLBsWritesByTheDriversNames(t *testing.T) {
	in := func(name string) string { return placeholderNamespace + "/" + name }
	w := metallblog.Writes{InPasses: 7, Failed: 3, Alone: map[string]int{
		in(placeholder.AllocationName("1f0e", v1alpha1.IPv4)): 4,
		in(placeholder.AllocationName("2a1b", v1alpha1.IPv6)): 1,
		in(placeholder.HoldName("addr-100-80-0-1")):           2,
		in(catchup.ProbePrefix + "b3"):                        1,
		in("something-else"):                                  1,
		tenantNamespace + "/svc-0001":                         5,
		tenantNamespace + "/alloc-looks-like-one":             1,
	}}
	got := *byRole(w)
	want := WritesByRole{FullPasses: 7, AllocationPlaceholders: 5, Holds: 2, Probes: 1, Workload: 6, Other: 1, Failed: 3}
	if got != want {
		t.Fatalf("byRole = %+v, want %+v", got, want)
	}
	r := Result{MetalLBPassesToCatchUp: 2, MetalLBCaughtUpAfterStartSeconds: 40, ConvergedAfterMetalLBCaughtUpSeconds: 11,
		MetalLBStatusWritesAfterCatchUp: 22, MetalLBWriteSecondsAfterCatchUp: 1.1, MetalLBWritesAfterCatchUp: &got}
	line := r.catchUpLine()
	for _, s := range []string{"7 in full passes", "5 of allocation placeholders", "2 of holds", "6 of workload Services", "1 of probes", "1 of others", "3 of them refused"} {
		if !strings.Contains(line, s) {
			t.Errorf("the report says %q, without %q", line, s)
		}
	}
}
