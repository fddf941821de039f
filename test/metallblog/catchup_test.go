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
	"strings"
	"testing"
	"time"
)

// A MetalLB log cut from a chaos run's (2026-12-02 15:01), two starts: the
// second start's first pass asks for another, the second does not.
const metallbLog = `{"msg":"MetalLB controller starting version 0.15.2 (no build information)","ts":"2026-12-02T15:04:30Z"}
{"controller":"ServiceReconciler - reprocessAll","start reconcile":"metallbreload/reload","ts":"2026-12-02T15:04:31Z"}
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
	c = Read(strings.NewReader(strings.Join(strings.Split(metallbLog, "\n")[:8], "\n")))
	if !c.CaughtUp.IsZero() || c.Passes != 1 {
		t.Fatalf("read %+v, want no catch-up after 1 pass", c)
	}
}
