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

package metallblog

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// A MetalLB log cut from a chaos run's (2026-12-02 15:01), two starts: the
// second start's first pass asks for another, the second does not.
const metallbLog = `{"msg":"MetalLB controller starting version 0.15.2 (no build information)","ts":"2026-12-02T15:04:30Z"}
{"controller":"ServiceReconciler - reprocessAll","start reconcile":"metallbreload/reload","ts":"2026-12-02T15:04:31Z"}
{"event":"serviceUpdated","msg":"updated service object","ts":"2026-12-02T15:04:35Z"}
{"controller":"ServiceReconciler - reprocessAll","end reconcile":"metallbreload/reload","ts":"2026-12-02T15:04:40Z"}
{"msg":"MetalLB controller starting version 0.15.2 (no build information)","ts":"2026-12-02T15:04:49Z"}
not json
{"controller":"ServiceReconciler - reprocessAll","start reconcile":"metallbreload/reload","ts":"2026-12-02T15:04:49Z"}
{"controller":"ServiceReconciler - reprocessAll","event":"force service reload","ts":"2026-12-02T15:05:23Z"}
{"controller":"ServiceReconciler - reprocessAll","end reconcile":"metallbreload/reload","ts":"2026-12-02T15:05:23Z"}
{"controller":"ServiceReconciler","event":"force service reload","ts":"2026-12-02T15:05:23Z"}
{"controller":"ServiceReconciler - reprocessAll","start reconcile":"metallbreload/reload","ts":"2026-12-02T15:05:23Z"}
{"controller":"ServiceReconciler - reprocessAll","end reconcile":"metallbreload/reload","ts":"2026-12-02T15:05:59Z"}
{"controller":"ServiceReconciler - reprocessAll","start reconcile":"metallbreload/reload","ts":"2026-12-02T15:05:59Z"}
{"event":"serviceUpdated","msg":"service is not updated","ts":"2026-12-02T15:06:01Z"}
{"event":"serviceUpdated","msg":"updated service object","ts":"2026-12-02T15:06:02Z"}
{"op":"updateServiceStatus","msg":"failed to update service","ts":"2026-12-02T15:06:02Z"}
{"event":"serviceUpdated","msg":"updated service object","ts":"2026-12-02T15:06:20Z"}
{"controller":"ServiceReconciler - reprocessAll","event":"force service reload","ts":"2026-12-02T15:06:35Z"}
{"controller":"ServiceReconciler - reprocessAll","end reconcile":"metallbreload/reload","ts":"2026-12-02T15:06:35Z"}
`

func TestReadCatchUpFindsTheFirstPassWithNothingToRetryAfterTheLastStart(t *testing.T) {
	c := Read(strings.NewReader(metallbLog))
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, "2026-12-02T"+s+"Z"); return t }
	if !c.Started.Equal(at("15:04:49")) || !c.CaughtUp.Equal(at("15:05:59")) || c.Passes != 2 {
		t.Fatalf("read %+v, want the start at 15:04:49 and the catch-up at 15:05:59, after 2 passes", c)
	}
	for _, tc := range []struct {
		by, want string
		after    int
	}{{"15:06:40", "15:06:35", 1}, {"15:06:35.5", "15:06:35", 1}, {"15:06:34", "15:05:59", 0}, {"15:05:00", "", 0}} {
		end, after := c.LastPassBy(at(tc.by))
		if want := at(tc.want); tc.want == "" && !end.IsZero() || tc.want != "" && !end.Equal(want) || after != tc.after {
			t.Errorf("LastPassBy(%s) = %s, %d passes after the catch-up; want %s, %d", tc.by, end.Format(time.TimeOnly), after, tc.want, tc.after)
		}
	}
	// Status writes since the last start, failed ones too; none before it,
	// and none that wrote nothing.
	for _, tc := range []struct {
		from, to string
		want     int
	}{{"15:04:49", "15:06:40", 3}, {"15:05:59", "15:06:02", 2}, {"15:06:02", "15:06:19", 0}, {"15:06:02", "15:06:20.5", 1}, {"15:06:20", "15:07:00", 0}} {
		if got := c.StatusWritesBetween(at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("StatusWritesBetween(%s, %s) = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
	c = Read(strings.NewReader(strings.Join(strings.Split(metallbLog, "\n")[:9], "\n")))
	if !c.CaughtUp.IsZero() || c.Passes != 1 {
		t.Fatalf("read %+v, want no catch-up after 1 pass", c)
	}
}

// TestHandledAfterFindsMetalLBsFirstLookAtAService: a Service is handled by
// its own reconcile once MetalLB has caught up (before, MetalLB filters it),
// or by a full pass that started after the time asked about.
func TestHandledAfterFindsMetalLBsFirstLookAtAService(t *testing.T) {
	lines := strings.Split(metallbLog, "\n")
	filtered := `{"controller":"ServiceReconciler","start reconcile":"ns/a","ts":"2026-12-02T15:05:10Z"}`
	alone := `{"controller":"ServiceReconciler","start reconcile":"ns/a","ts":"2026-12-02T15:06:40Z"}`
	log := strings.Join(append(append(append([]string{}, lines[:6]...), filtered), lines[6:]...), "\n") + alone + "\n"
	var st State
	for l := range strings.SplitSeq(log, "\n") {
		st.Feed([]byte(l))
	}
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, "2026-12-02T"+s+"Z"); return t }
	for _, tc := range []struct{ key, after, want string }{
		{"ns/a", "15:04:50", "15:05:59"},   // the reconcile at 15:05:10 was filtered; the pass from 15:05:23
		{"ns/a", "15:06:00", "15:06:40"},   // no pass started since; its own reconcile
		{"ns/b", "15:05:59.4", "15:06:35"}, // the pass that started in that second
		{"ns/b", "15:06:36", ""},           // nothing since
	} {
		got, ok := st.HandledAfter(tc.key, at(tc.after))
		if tc.want == "" && ok || tc.want != "" && !got.Equal(at(tc.want)) {
			t.Errorf("HandledAfter(%s, %s) = %s, %v; want %q", tc.key, tc.after, got.Format(time.TimeOnly), ok, tc.want)
		}
	}
}

// TestWritesBetweenSortsWritesByWhatMetalLBWasDoing: a write inside a full
// pass counts as the pass's, one after a Service's own reconcile as that
// Service's (other controllers' lines between them do not count), failed
// writes count in either, and an interval that ends before it begins holds
// none.
func TestWritesBetweenSortsWritesByWhatMetalLBWasDoing(t *testing.T) {
	log := metallbLog + `{"controller":"ServiceReconciler","start reconcile":"ns/a","ts":"2026-12-02T15:06:40Z"}
{"event":"serviceUpdated","msg":"updated service object","ts":"2026-12-02T15:06:40Z"}
{"controller":"ServiceReconciler","end reconcile":"ns/a","ts":"2026-12-02T15:06:40Z"}
{"controller":"ServiceReconciler","start reconcile":"ns/b","ts":"2026-12-02T15:06:41Z"}
{"controller":"PoolStatusReconciler","start reconcile":"metallb-system/pool","ts":"2026-12-02T15:06:41Z"}
{"op":"updateServiceStatus","msg":"failed to update service","ts":"2026-12-02T15:06:41Z"}
{"controller":"ServiceReconciler","start reconcile":"ns/a","ts":"2026-12-02T15:06:42Z"}
{"event":"serviceUpdated","msg":"updated service object","ts":"2026-12-02T15:06:42Z"}
`
	c := Read(strings.NewReader(log))
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, "2026-12-02T"+s+"Z"); return t }
	for _, tc := range []struct {
		from, to string
		want     Writes
	}{
		{"15:05:59", "15:07:00", Writes{InPasses: 3, Alone: map[string]int{"ns/a": 2, "ns/b": 1}, Failed: 2}},
		{"15:06:35", "15:06:41", Writes{Alone: map[string]int{"ns/a": 1, "ns/b": 1}, Failed: 1}},
		{"15:05:59", "15:06:19", Writes{InPasses: 2, Alone: map[string]int{}, Failed: 1}},
		// A run that converged before MetalLB caught up.
		{"15:06:42", "15:06:35", Writes{Alone: map[string]int{}}},
	} {
		got := c.WritesBetween(at(tc.from), at(tc.to))
		if got.InPasses != tc.want.InPasses || got.Failed != tc.want.Failed || !maps.Equal(got.Alone, tc.want.Alone) {
			t.Errorf("WritesBetween(%s, %s) = %+v, want %+v", tc.from, tc.to, got, tc.want)
		}
		if n := c.StatusWritesBetween(at(tc.from), at(tc.to)); n != got.InPasses+sum(got.Alone) {
			t.Errorf("StatusWritesBetween(%s, %s) = %d, not the %+v sorted", tc.from, tc.to, n, got)
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
