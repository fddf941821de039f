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

package catchup

import (
	"testing"
	"time"
)

// t0 is when every script starts.
var t0 = time.Date(2026, 12, 5, 21, 0, 0, 400_000_000, time.UTC)

// order is the order every script's questions are written in.
var order = []int{3, 1, 4, 0, 2}

// look is no event: the line only moves the clock and checks.
const look Kind = -1

// line is one event of a script and what must follow it. after moves the
// clock before the event; zero expectations are not checked unless the
// line says so.
type line struct {
	after time.Duration
	e     Event
	// answer: instead of e, MetalLB answers the question out in this order
	// of probes (empty: the order written), the question being written
	// (if it is not yet) after early answers.
	answer []int
	early  int
	// rounds: the line answers this many questions in a row so (0: one);
	// each but the last must ask the next and open nothing.
	rounds int
	// open is whether the gate must be open after the line.
	open bool
	// ask: the line must ask a question (and only then); opened, likewise.
	ask, opened bool
	// ready: "" unchanged, "1" or "0".
	ready string
	// why: the gate must shut with a reason (and only then).
	why bool
}

// play runs a script from a driver that has heard nothing.
func play(t *testing.T, script []line) {
	t.Helper()
	s, now, rv := State{Trust: time.Minute}, t0, uint64(100)
	for n, l := range script {
		now = now.Add(l.after)
		var a Actions
		for round := range max(l.rounds, 1) {
			if l.answer == nil {
				break
			}
			if round > 0 && (a.Ask == nil || a.Opened) {
				t.Fatalf("line %d: round %d of %d did not ask again, or opened: %+v", n, round, l.rounds, a)
			}
			q := s.Out
			if q == nil {
				t.Fatalf("line %d: no question to answer", n)
			}
			probes := l.answer
			if len(probes) == 0 {
				probes = order
			}
			var events []Event
			for k, i := range probes {
				if k == l.early && q.written[0] == 0 {
					events = append(events, written(q, &rv))
				}
				rv++
				events = append(events, Event{Kind: Answered, At: q.At, Set: q.Set, Probe: i, Revision: rv})
			}
			if l.early >= len(probes) && q.written[0] == 0 {
				events = append(events, written(q, &rv))
			}
			for k, e := range events {
				e.Now = now
				var got Actions
				s, got = Step(s, e)
				if k < len(events)-1 && (got.Ask != nil || got.Opened || got.Answer != "") {
					t.Fatalf("line %d: acted on event %d of %d: %+v", n, k+1, len(events), got)
				}
				a = got
			}
		}
		if l.answer == nil && l.e.Kind != look {
			e := l.e
			e.Now = now
			if e.At.IsZero() && e.Kind != Refused {
				e.At = now
			}
			if e.Kind == AskFailed || e.Kind == Overdue {
				e.At = s.Out.At
			}
			s, a = Step(s, e)
		}
		ready := ""
		if a.Ready != nil {
			ready = map[bool]string{true: "1", false: "0"}[*a.Ready]
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"open", s.Open(now), l.open},
			{"asked", a.Ask != nil, l.ask},
			{"opened", a.Opened, l.opened},
			{"ready", ready, l.ready},
			{"shut with a reason", a.Why != "", l.why},
		} {
			if c.got != c.want {
				t.Errorf("line %d (%+v): %s is %v, want %v", n, l, c.what, c.got, c.want)
			}
		}
		if a.Ask != nil && a.Ask != s.Out {
			t.Errorf("line %d: asked %+v, out %+v", n, a.Ask, s.Out)
		}
	}
}

// written is the event of q's probes written, in order, at the revisions
// after rv.
func written(q *Question, rv *uint64) Event {
	e := Event{Kind: Asked, At: q.At}
	for _, i := range order {
		*rv++
		e.Written[i] = *rv
	}
	return e
}

func TestTheCatchUpMachine(t *testing.T) {
	answer := line{answer: []int{}, rounds: InOrder, open: true, opened: true, ready: "1"}
	ask := line{e: Event{Kind: Write}, ask: true}
	for _, tc := range []struct {
		name   string
		script []line
	}{
		{"a driver that heard nothing asks at its first write, once", []line{
			ask,
			{e: Event{Kind: Write}},
			answer,
			{e: Event{Kind: Write}, open: true},
		}},
		{"answers out of order are a full pass's: asked again at once, on the other set", []line{
			ask,
			{answer: []int{0, 1, 2, 3, 4}, ask: true, ready: "0"},
			answer,
		}},
		{"answers that began before the question was all written are early: nothing opens or shuts, and it is asked again", []line{
			ask,
			{answer: []int{}, early: 1, ask: true},
			{answer: []int{}, early: 4, ask: true},
			{answer: []int{}, early: 5, ask: true},
			answer,
		}},
		{"early answers out of order tell nothing either", []line{
			ask,
			{answer: []int{0, 1, 2, 3, 4}, early: 2, ask: true},
			answer,
		}},
		{"a question is read once written and answered, in either order", []line{
			ask,
			{answer: []int{3, 1, 4, 0}},
			{answer: []int{2}, ask: true},
			{answer: []int{}, open: true, opened: true, ready: "1"},
		}},
		{"a start undoes the answers in order counted so far", []line{
			{e: Event{Kind: Started, At: t0.Add(-time.Hour)}},
			ask,
			{answer: []int{}, ask: true},
			{e: Event{Kind: Started}},
			{answer: []int{}, ask: true},
			{answer: []int{}, open: true, opened: true, ready: "1"},
		}},
		{"a pass's answer starts the count of answers in order again; an early one does not", []line{
			ask,
			{answer: []int{}, ask: true},
			{answer: []int{0, 1, 2, 3, 4}, ask: true, ready: "0"},
			{answer: []int{}, ask: true},
			{answer: []int{}, early: 2, ask: true},
			{answer: []int{}, open: true, opened: true, ready: "1"},
		}},
		{"a question unanswered for its patience is overdue: MetalLB is not ready, the question stays out, and its late answer opens the gate", []line{
			ask,
			{after: Patience, e: Event{Kind: Overdue}, ready: "0"},
			{e: Event{Kind: Write}},
			{after: 10 * time.Second, e: Event{Kind: Write}},
			answer,
		}},
		{"a question that could not be written is asked again at the next write", []line{
			ask,
			{e: Event{Kind: AskFailed}},
			ask,
		}},
		{"a probe deleted while its question is out is asked again, which recreates it", []line{
			ask,
			{e: Event{Kind: ProbeGone, Set: 1}, ask: true},
			{e: Event{Kind: ProbeGone, Set: 1}},
		}},
		{"without a pool that could show a start, the answer holds for the trust period", []line{
			ask, answer,
			{after: 59 * time.Second, e: Event{Kind: look}, open: true},
			{after: 2 * time.Second, e: Event{Kind: look}, open: false},
			ask,
		}},
		{"a pool that could show a start keeps the answer good, until it falls at once", []line{
			{e: Event{Kind: Pool, Pool: "small", Assigned: 3}},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
			{after: time.Hour, e: Event{Kind: look}, open: true},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 299}, open: true},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 74}, why: true},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
		}},
		{"a fall to a quarter, not below, is releases", []line{
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
			{e: Event{Kind: Pool, Pool: "big", Assigned: 75}, open: true},
		}},
		{"a pool of fewer than 16 tells nothing by falling", []line{
			{e: Event{Kind: Pool, Pool: "p", Assigned: 15}},
			ask, answer,
			{e: Event{Kind: Pool, Pool: "p", Assigned: 0}, open: true},
		}},
		{"a pool released below 16 leaves the answer to the trust period, counted from the answer", []line{
			{e: Event{Kind: Pool, Pool: "big", Assigned: 20}},
			ask, answer,
			{after: time.Hour, e: Event{Kind: Pool, Pool: "big", Assigned: 12}},
		}},
		{"a pool deleted likewise", []line{
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
			{after: time.Hour, e: Event{Kind: Pool, Pool: "big", Gone: true}},
		}},
		{"a pool that grows able to show a start while the answer holds keeps it good", []line{
			ask, answer,
			{after: 30 * time.Second, e: Event{Kind: Pool, Pool: "new", Assigned: 16}, open: true},
			{after: time.Hour, e: Event{Kind: look}, open: true},
		}},
		{"a pool that grows after the trust period does not make an old answer good", []line{
			ask, answer,
			{after: 2 * time.Minute, e: Event{Kind: Pool, Pool: "new", Assigned: 40}},
		}},
		{"a refusal from before the answer, or in its second, is old news", []line{
			ask, answer,
			{after: 2 * time.Second, e: Event{Kind: Refused, At: t0.Add(-20 * time.Second)}, open: true},
			{e: Event{Kind: Refused, At: t0.Truncate(time.Second)}, open: true},
			{e: Event{Kind: Refused, At: t0.Truncate(time.Second).Add(time.Second)}, why: true},
		}},
		{"a refusal that gives no time shuts the gate", []line{
			ask, answer,
			{e: Event{Kind: Refused}, why: true},
		}},
		{"the controller's Pod: a start after the answer shuts the gate", []line{
			{e: Event{Kind: Started, At: t0.Add(-time.Hour)}},
			ask, answer,
			{after: time.Second, e: Event{Kind: Started}, why: true},
			ask, answer,
		}},
		{"the controller's Pod: an answer holds with no trust period, and a start from before it is old", []line{
			ask, answer,
			{e: Event{Kind: Started, At: t0.Add(-time.Hour)}, open: true},
			{after: 24 * time.Hour, e: Event{Kind: look}, open: true},
			{e: Event{Kind: Started, At: t0.Add(-time.Minute)}, open: true},
		}},
		{"the controller's Pod: a start in the answer's second counts as later", []line{
			ask, answer,
			{e: Event{Kind: Started, At: t0.Truncate(time.Second)}, why: true},
		}},
		{"the controller's Pod: pools are no longer read", []line{
			{e: Event{Kind: Started, At: t0.Add(-time.Hour)}},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
			{e: Event{Kind: Pool, Pool: "big", Assigned: 0}, open: true},
		}},
		{"the controller's Pod: a refusal after the answer is no start, and the gate stays open", []line{
			{e: Event{Kind: Started, At: t0.Add(-time.Hour)}},
			ask, answer,
			{after: 2 * time.Second, e: Event{Kind: Refused, At: t0.Add(2 * time.Second)}, open: true},
			{e: Event{Kind: Refused}, open: true},
		}},
		{"a pool that could show a start: a refusal after the answer is no start either", []line{
			{e: Event{Kind: Pool, Pool: "big", Assigned: 300}},
			ask, answer,
			{after: 2 * time.Second, e: Event{Kind: Refused, At: t0.Add(2 * time.Second)}, open: true},
			{e: Event{Kind: Pool, Pool: "big", Assigned: 12}, why: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { play(t, tc.script) })
	}
}

// TestAnAnswerToAnotherQuestionIsIgnored: MetalLB's answers to a question
// that is no longer out (its writing failed, so another was asked on the
// other set) open nothing.
func TestAnAnswerToAnotherQuestionIsIgnored(t *testing.T) {
	s, _ := Step(State{Trust: time.Minute}, Event{Kind: Write, Now: t0})
	old := *s.Out
	s, _ = Step(s, Event{Kind: AskFailed, Now: t0.Add(time.Second), At: old.At})
	s, a := Step(s, Event{Kind: Write, Now: t0.Add(Patience)})
	if a.Ask == nil || a.Ask.Set == old.Set {
		t.Fatalf("asked %+v after writing %+v failed", a.Ask, old)
	}
	rv := uint64(0)
	s, _ = Step(s, written(s.Out, &rv))
	for _, i := range order {
		for _, e := range []Event{
			{Kind: Answered, At: old.At, Set: old.Set, Probe: i},      // the old question
			{Kind: Answered, At: old.At, Set: s.Out.Set, Probe: i},    // its stamp on the new set
			{Kind: Answered, At: s.Out.At, Set: old.Set, Probe: i},    // the new stamp on the old set
			{Kind: Answered, At: s.Out.At, Set: s.Out.Set, Probe: -1}, // no probe
		} {
			rv++
			e.Now, e.Revision = t0.Add(Patience+time.Second), rv
			if s, a = Step(s, e); a.Opened || s.Open(e.Now) {
				t.Fatalf("%+v opened the gate", e)
			}
		}
	}
}
