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
	"cmp"
	"maps"
	"slices"
	"time"
)

// Probes is how many probes a question asks: a full pass that finds them
// all asked answers them in the order they were written once in 5! = 120
// times.
const Probes = 5

// InOrder is how many questions in a row MetalLB must answer in the order
// written for the gate to open: passes would, once in 120² = 14,400 times.
const InOrder = 2

// Patience is how long a question may wait for its answer: past it,
// MetalLB is taken for not ready (down, with no configuration, or in a long
// full pass). The question stays out: whenever MetalLB gets to its probes,
// their answers count. Nothing else would ask again: the writes that wait
// for the gate are parked until it opens.
const Patience = time.Minute

// What a pool's status must show for its fall to read as a start of MetalLB
// (inference, used only where no direct signal exists): a count of assigned
// addresses that falls below restartedBelow of what it was, in one status
// write, from at least restartedFrom. With fewer, releases in a row between
// two of MetalLB's status writes could look the same.
const (
	restartedBelow = 0.25
	restartedFrom  = 16
)

// Kind is what happened.
type Kind int

const (
	// Write: the driver is about to change a Service (or the leader
	// starts).
	Write Kind = iota
	// AskFailed: writing the question stamped At failed.
	AskFailed
	// Asked: the question stamped At is written; Written holds the
	// revision each probe was written at.
	Asked
	// Answered: MetalLB answered probe Probe of set Set, at Revision, for
	// the question stamped At.
	Answered
	// ProbeGone: probe Probe of set Set was deleted.
	ProbeGone
	// Overdue: the question stamped At has waited Patience.
	Overdue
	// Started: a container of MetalLB's controller Pod started at At (the
	// direct signal).
	Started
	// Pool: a MetalLB pool's status counts Assigned addresses (Gone: the
	// pool was deleted).
	Pool
	// Refused: at At, MetalLB refused an address for a placeholder that no
	// longer exists, a deletion it never heard of.
	Refused
)

// Event is what Step is told. Now is when the driver saw it.
type Event struct {
	Kind     Kind
	Now      time.Time
	At       time.Time
	Set      int
	Probe    int
	Revision uint64
	Written  [Probes]uint64
	Pool     string
	Assigned int64
	Gone     bool
}

// Question is a question out: the set of probes it is written on, and its
// stamp.
type Question struct {
	At  time.Time
	Set int
	// written holds the revision each probe was written at, once all are
	// (zero: not yet); answers, each probe's revision once answered.
	written, answers [Probes]uint64
}

// State is what the driver knows of MetalLB. Its zero value, with Trust
// set, is a driver that has heard nothing yet.
type State struct {
	// Trust is how long an answer holds by itself where no start of
	// MetalLB could show (no direct signal, no pool big enough).
	Trust time.Duration
	// Trusted is when MetalLB last answered from single events; zero once
	// something showed that it has ignored them since.
	Trusted time.Time
	// Out is the question waiting for its answer, if any.
	Out *Question
	// inOrder counts the questions answered in the order written since the
	// gate was last open or a pass answered.
	inOrder int
	// lastSet is the set of probes the last question was written on; the
	// next one goes on the other, so that MetalLB's writes of one set's
	// answers never answer the next question.
	lastSet int
	// Direct: MetalLB's controller runs as a Pod the driver watches, so a
	// start shows as it happens and nothing is inferred.
	Direct bool
	// pools is each MetalLB pool's count of assigned addresses.
	pools map[string]int64
	// watched: since the answer, some pool could always have shown a start.
	watched bool
}

// Actions are what the driver must do after a step.
type Actions struct {
	// Ask: write this question on its probes, in its order.
	Ask *Question
	// Opened: the gate opened; wake what waits for it.
	Opened bool
	// Ready is MetalLB's readiness when the step changed what is known of
	// it (nil: unchanged).
	Ready *bool
	// Answer is how MetalLB answered a question ("single-events",
	// "full-pass", "early"), and Took how long it took.
	Answer string
	Took   time.Duration
	// Why says why the gate shut, for the log.
	Why string
}

// Open tells whether the driver may change Services at now.
func (s State) Open(now time.Time) bool {
	return !s.Trusted.IsZero() && (s.Direct || s.watched || now.Sub(s.Trusted) < s.Trust)
}

// startShows: some pool has enough assigned addresses for a start of
// MetalLB to show in its status.
func (s State) startShows() bool {
	for _, n := range s.pools {
		if n >= restartedFrom {
			return true
		}
	}
	return false
}

// Step is the catch-up machine: what an event makes of the state, and what
// the driver must do about it.
//
// MetalLB (v0.15) ignores the events of single Services after a start until
// one full pass over every Service finishes with no failed write, and any
// Service changed meanwhile makes the pass fail and start again. So the
// driver writes no Service while it may be in that window. It tells it is
// not by asking: it sets MetalLB's ip-allocated-from-pool annotation on five
// probes at once, and MetalLB removes it whenever it handles one. Handling
// single events, MetalLB answers in the order the probes were written; a
// full pass answers the probes its list found asked, in the list's order.
// So answers in the order written count, but only when none came before
// the last probe was written: passes that listed while the question was
// being written would each answer a part of it, and parts of one in a row
// can be in order (those answers are early, and the driver asks again).
// InOrder questions in a row answered so open the gate. It shuts again
// when MetalLB starts: seen directly from its Pod where it runs as one,
// inferred elsewhere from a pool whose count of assigned addresses falls at
// once (a new process counts none before its first pass), or, where no pool
// is big enough for that, after Trust. There, a refusal naming a phantom
// made after the answer shuts it too. A start also undoes the answers in
// order counted so far.
func Step(s State, e Event) (State, Actions) {
	var a Actions
	switch e.Kind {
	case Write:
		if !s.Open(e.Now) && s.Out == nil {
			s, a.Ask = ask(s, e)
		}
	case AskFailed:
		if s.Out != nil && s.Out.At.Equal(e.At) {
			s.Out = nil
		}
	case Asked:
		if s.Out != nil && s.Out.At.Equal(e.At) && !slices.Contains(e.Written[:], 0) {
			q := *s.Out
			q.written = e.Written
			s.Out = &q
			return read(s, e)
		}
	case Overdue:
		if s.Out != nil && s.Out.At.Equal(e.At) {
			a.Ready = new(false)
		}
	case ProbeGone:
		if s.Out != nil && s.Out.Set == e.Set {
			s, a.Ask = ask(s, e) // asking again recreates it
		}
	case Answered:
		return answered(s, e)
	case Started:
		// A start's time has a second's precision: one in the answer's
		// second counts as later.
		if !e.At.Before(s.Trusted.Truncate(time.Second)) {
			a.Why = shut(&s, "MetalLB's controller started: it ignores single Service events until a full pass succeeds")
		}
		s.Direct, s.pools, s.watched = true, nil, false
	case Pool:
		if !s.Direct {
			return poolChanged(s, e)
		}
	case Refused:
		// Where a start would show (its Pod, or a pool big enough), a
		// refusal is no sign of one: MetalLB's own full passes leave
		// phantoms in steady load (a pass's list gives a Service deleted
		// since its address back), and the tombstone repairs them while
		// writes go on. Elsewhere it is the only sign. A refusal from before
		// the last answer is old news: the full pass that ended MetalLB's
		// wait makes the refusals of the deletions it missed. Its time has
		// a second's precision, so one in the answer's second counts as
		// older.
		if !s.Direct && !s.watched && (e.At.IsZero() || e.At.After(s.Trusted)) {
			a.Why = shut(&s, "MetalLB refused an address for a placeholder it never heard was deleted: it was ignoring single Service events")
		}
	}
	return s, a
}

// poolChanged follows a pool's count of assigned addresses, where MetalLB's
// Pod is not seen: a count that falls at once is a start.
func poolChanged(s State, e Event) (State, Actions) {
	var a Actions
	before := s.pools[e.Pool]
	s.pools = maps.Clone(s.pools)
	if s.pools == nil {
		s.pools = map[string]int64{}
	}
	if e.Gone {
		delete(s.pools, e.Pool)
	} else {
		s.pools[e.Pool] = e.Assigned
		if before >= restartedFrom && float64(e.Assigned) < restartedBelow*float64(before) {
			a.Why = shut(&s, "MetalLB's count of the addresses it assigned from a pool fell at once: it started again")
		}
	}
	// Once no pool can show a start, the answer holds for Trust from when
	// it came; a pool that grows able to while it holds makes it hold from
	// then on.
	s.watched = s.startShows() && s.Open(e.Now)
	return s, a
}

// ask writes a new question on the other set of probes.
func ask(s State, e Event) (State, *Question) {
	s.lastSet = 1 - s.lastSet
	s.Out = &Question{At: e.Now, Set: s.lastSet}
	return s, s.Out
}

func shut(s *State, why string) string {
	s.inOrder = 0
	if s.Trusted.IsZero() {
		return ""
	}
	s.Trusted, s.watched = time.Time{}, false
	return why
}

// answered records one probe's answer.
func answered(s State, e Event) (State, Actions) {
	q := s.Out
	if q == nil || q.Set != e.Set || !q.At.Equal(e.At) || e.Probe < 0 || e.Probe >= Probes || e.Revision == 0 ||
		q.answers[e.Probe] != 0 {
		return s, Actions{}
	}
	answers := *q
	answers.answers[e.Probe] = e.Revision
	s.Out = &answers
	return read(s, e)
}

// read reads the question out once it is written and all five answers are
// in.
func read(s State, e Event) (State, Actions) {
	var a Actions
	q := s.Out
	if slices.Contains(q.written[:], 0) || slices.Contains(q.answers[:], 0) {
		return s, a
	}
	s.Out, a.Took = nil, e.Now.Sub(q.At)
	if slices.Min(q.answers[:]) <= slices.Max(q.written[:]) {
		a.Answer = "early"
		s, a.Ask = ask(s, e)
		return s, a
	}
	if !slices.Equal(byRevision(q.answers), byRevision(q.written)) {
		a.Answer, a.Ready, s.inOrder = "full-pass", new(false), 0
		s, a.Ask = ask(s, e)
		return s, a
	}
	a.Answer = "single-events"
	if s.inOrder++; s.inOrder < InOrder {
		s, a.Ask = ask(s, e)
		return s, a
	}
	a.Ready, a.Opened, s.inOrder = new(true), true, 0
	s.Trusted, s.watched = e.Now, s.startShows()
	return s, a
}

// byRevision orders the probes by their revisions.
func byRevision(revisions [Probes]uint64) []int {
	probes := make([]int, Probes)
	for i := range probes {
		probes[i] = i
	}
	slices.SortFunc(probes, func(x, y int) int { return cmp.Compare(revisions[x], revisions[y]) })
	return probes
}
