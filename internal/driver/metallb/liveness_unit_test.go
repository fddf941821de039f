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

package metallb

import (
	"context"
	"testing"
	"time"
)

// TestAQuestionAPassAnsweredIsAskedAgainAfterAPause: after an answer from a
// full pass, the question is asked again only after a random pause, and a
// write that wants the gate meanwhile asks nothing.
func TestAQuestionAPassAnsweredIsAskedAgainAfterAPause(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the pause's end asks nothing in this test
	for range 50 {
		l := &liveness{now: func() time.Time { return now }}
		l.askLater(ctx)
		if pause := l.quiet.Sub(now); pause < pauseMin || pause >= pauseMax {
			t.Fatalf("paused %v, want between %v and %v", pause, pauseMin, pauseMax)
		}
		// No client: a question asked now would fail on it.
		if err := l.ask(context.Background()); err != nil || !l.asked.IsZero() {
			t.Fatalf("asked during the pause: %v, asked at %v", err, l.asked)
		}
	}
}
