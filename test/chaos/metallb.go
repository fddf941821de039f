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
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// catchUp is what MetalLB's log says of its last start: when it started,
// and when its first full pass with nothing left to retry ended (zero if
// none did), from which on it handles the events of single Services
// (docs/design.md, "MetalLB after a start"). Times are to the second.
type catchUp struct {
	started, caughtUp time.Time
	passes            int // full passes from the start to the one that caught up, that one included
	// passEnds are when every full pass since the start ended, those after
	// the catch-up too: MetalLB still runs one for each change of an
	// allocation key or assigned Service's deletion.
	passEnds []time.Time
}

// lastPassBy returns when the last full pass that ended by t ended (zero if
// none did; the log's times are to the second, so a pass logged in t's
// second counts), and how many full passes ended after the catch-up and by
// then.
func (c catchUp) lastPassBy(t time.Time) (end time.Time, afterCatchUp int) {
	for _, e := range c.passEnds {
		if e.After(t.Truncate(time.Second)) {
			break
		}
		end = e
		if !c.caughtUp.IsZero() && e.After(c.caughtUp) {
			afterCatchUp++
		}
	}
	return end, afterCatchUp
}

// The log lines read, all of MetalLB v0.15.2's controller.
const (
	metallbStarting  = "MetalLB controller starting"
	reprocessAll     = "ServiceReconciler - reprocessAll"
	reprocessRetried = "force service reload"
)

// readCatchUp reads a MetalLB controller log, every start of the process
// appended to it.
func readCatchUp(r io.Reader) catchUp {
	var st catchUpState
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		st.feed(sc.Bytes())
	}
	return st.c
}

// catchUpState reads MetalLB's log line by line: the harness reads it at
// the end of a run, and the invariants' clocks while it runs.
type catchUpState struct {
	c       catchUp
	retried bool
}

func (st *catchUpState) feed(b []byte) {
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
		*c = catchUp{started: line.TS}
	case line.Controller != reprocessAll:
	case line.End != "":
		c.passEnds = append(c.passEnds, line.TS)
		if c.caughtUp.IsZero() {
			c.passes++
			if !st.retried {
				c.caughtUp = line.TS
			}
		}
	case line.Start != "":
		st.retried = false
	case line.Event == reprocessRetried:
		st.retried = true
	}
}
