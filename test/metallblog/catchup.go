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

// Package metallblog reads the MetalLB controller's log (v0.15.2, its JSON
// lines) for what the harnesses measure MetalLB's recovery by: its starts,
// its full passes over every Service, and the end of its catch-up after a
// start (docs/design.md, "MetalLB after a start"). The chaos harness reads
// the log file of the process it runs; the node harness's chaos run, the
// log of MetalLB's controller Pod.
package metallblog

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
)

// CatchUp is what MetalLB's log says of its last start: when it started,
// and when its first full pass with nothing left to retry ended (zero if
// none did), from which on it handles the events of single Services
// (docs/design.md, "MetalLB after a start"). Times are to the second.
type CatchUp struct {
	Started, CaughtUp time.Time
	// Passes are the full passes from the start to the one that caught up,
	// that one included.
	Passes int
	// PassEnds are when every full pass since the start ended, those after
	// the catch-up too: MetalLB still runs one for each change of an
	// allocation key or assigned Service's deletion.
	PassEnds []time.Time
	// StatusWrites are MetalLB's Service status writes since the start, in
	// order, those that failed too: each costs a request of its client's 20
	// per second (its pools' status writes, not logged, cost more of them).
	StatusWrites []StatusWrite
}

// StatusWrite is one of MetalLB's writes of a Service's status.
type StatusWrite struct {
	At time.Time
	// Service is the Service (namespace/name) whose own event MetalLB was
	// handling; empty for a write of a full pass, whose lines name none.
	Service string
	// Failed: the API server refused it (a pass with one fails).
	Failed bool
}

// Writes counts status writes: of full passes, and of single Services'
// events by Service; Failed counts those of either the API server refused.
type Writes struct {
	InPasses int
	Alone    map[string]int
	Failed   int
}

// WritesBetween sorts MetalLB's Service status writes after from and by to
// (to the second, as StatusWritesBetween) by what MetalLB was doing. There
// are none when to comes before from: a run can converge before MetalLB
// catches up.
func (c CatchUp) WritesBetween(from, to time.Time) Writes {
	w := Writes{Alone: map[string]int{}}
	first := c.writesBy(from)
	for _, s := range c.StatusWrites[first:max(first, c.writesBy(to))] {
		if s.Service == "" {
			w.InPasses++
		} else {
			w.Alone[s.Service]++
		}
		if s.Failed {
			w.Failed++
		}
	}
	return w
}

// writesBy is how many status writes were logged by t's second.
func (c CatchUp) writesBy(t time.Time) int {
	i, _ := slices.BinarySearchFunc(c.StatusWrites, t.Truncate(time.Second).Add(time.Second),
		func(s StatusWrite, t time.Time) int { return s.At.Compare(t) })
	return i
}

// StatusWritesBetween counts MetalLB's Service status writes after from and
// by to (to the second, as LastPassBy); none when to comes before from.
func (c CatchUp) StatusWritesBetween(from, to time.Time) int {
	return max(0, c.writesBy(to)-c.writesBy(from))
}

// LastPassBy returns when the last full pass that ended by t ended (zero if
// none did; the log's times are to the second, so a pass logged in t's
// second counts), and how many full passes ended after the catch-up and by
// then.
func (c CatchUp) LastPassBy(t time.Time) (end time.Time, afterCatchUp int) {
	for _, e := range c.PassEnds {
		if e.After(t.Truncate(time.Second)) {
			break
		}
		end = e
		if !c.CaughtUp.IsZero() && e.After(c.CaughtUp) {
			afterCatchUp++
		}
	}
	return end, afterCatchUp
}

// ClientRate is the requests per second MetalLB v0.15.2's controller may
// send (controller-runtime v0.20's default client limit; it has no flag for
// it): every status it writes takes one.
const ClientRate = 20

// The log lines read, all of MetalLB v0.15.2's controller.
const (
	metallbStarting  = "MetalLB controller starting"
	reprocessAll     = "ServiceReconciler - reprocessAll"
	reprocessRetried = "force service reload"
	serviceAlone     = "ServiceReconciler"
	statusWritten    = "updated service object"
	statusNotWritten = "failed to update service"
)

// Read reads a MetalLB controller log, every start of the process appended
// to it.
func Read(r io.Reader) CatchUp {
	var st State
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		st.Feed(sc.Bytes())
	}
	return st.c
}

// State reads MetalLB's log line by line, as it grows.
type State struct {
	c       CatchUp
	retried bool
	// alone is when MetalLB handled each Service (namespace/name) on its
	// own, caught up since its last start (before, it filters them), in
	// order.
	alone map[string][]time.Time
	// passes are the full passes' starts and ends, in order; passStart the
	// start of the one running.
	passes    [][2]time.Time
	passStart time.Time
	// handling is the Service whose own event MetalLB handles now, if any.
	handling string
}

// Feed reads one line of the log.
func (st *State) Feed(b []byte) {
	var line struct {
		Msg        string    `json:"msg"`
		TS         time.Time `json:"ts"`
		Controller string    `json:"controller"`
		Start      string    `json:"start reconcile"`
		End        string    `json:"end reconcile"`
		Event      string    `json:"event"`
	}
	if json.Unmarshal(b, &line) != nil {
		return
	}
	c := &st.c
	switch {
	case strings.HasPrefix(line.Msg, metallbStarting):
		*c = CatchUp{Started: line.TS}
		st.passStart, st.handling = time.Time{}, ""
	case line.Msg == statusWritten || line.Msg == statusNotWritten:
		w := StatusWrite{At: line.TS, Failed: line.Msg == statusNotWritten}
		if st.passStart.IsZero() {
			w.Service = st.handling
		}
		c.StatusWrites = append(c.StatusWrites, w)
	case line.Controller == serviceAlone && line.Start != "":
		st.handling = line.Start
		if c.CaughtUp.IsZero() {
			return
		}
		if st.alone == nil {
			st.alone = map[string][]time.Time{}
		}
		st.alone[line.Start] = append(st.alone[line.Start], line.TS)
	case line.Controller != reprocessAll:
	case line.End != "":
		if !st.passStart.IsZero() {
			st.passes = append(st.passes, [2]time.Time{st.passStart, line.TS})
			st.passStart = time.Time{}
		}
		c.PassEnds = append(c.PassEnds, line.TS)
		if c.CaughtUp.IsZero() {
			c.Passes++
			if !st.retried {
				c.CaughtUp = line.TS
			}
		}
	case line.Start != "":
		st.retried = false
		st.passStart = line.TS
	case line.Event == reprocessRetried:
		st.retried = true
	}
}

// CatchUp is what the lines fed so far say of MetalLB's last start.
func (st *State) CatchUp() CatchUp { return st.c }

// HandledAfter returns when MetalLB, by the lines fed so far, first
// handled Service key (namespace/name) at or after t: a reconcile of it
// alone once caught up, or the end of a full pass that started at or after
// t (a pass lists every Service when it starts). Times are to the second,
// so a line in t's second counts.
func (st *State) HandledAfter(key string, t time.Time) (time.Time, bool) {
	t = t.Truncate(time.Second)
	var first time.Time
	alone := st.alone[key]
	if i, _ := slices.BinarySearchFunc(alone, t, time.Time.Compare); i < len(alone) {
		first = alone[i]
	}
	for _, p := range st.passes {
		if p[0].Before(t) {
			continue
		}
		if first.IsZero() || p[1].Before(first) {
			first = p[1]
		}
		break
	}
	return first, !first.IsZero()
}
