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
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/metallblog"
	"github.com/cozystack/address-controller/test/promtext"
	"github.com/cozystack/address-controller/test/runkit"
)

// party is one of the actors a bounded invariant waits for.
type party string

const (
	// partyCore: a core replica leads.
	partyCore party = "core"
	// partyDriver: a driver replica leads and, for the MetalLB driver, its
	// gate is open (metallb_iad_metallb_ready is 1): it writes Services.
	partyDriver party = "driver"
	// partyAllocator: MetalLB runs and has caught up since its last start
	// (its first full pass with nothing left to retry ended): it handles
	// single Services' events; or the Cilium operator holds its lease,
	// taken since its last kill: its LB-IPAM runs.
	partyAllocator party = "allocator"
)

// abilities records since when each party has been able to act without a
// break; a party that cannot act now has no entry.
type abilities struct {
	mu    sync.Mutex
	since map[party]time.Time
}

func newAbilities() *abilities { return &abilities{since: map[party]time.Time{}} }

// set records whether p can act at t: a party that could already keeps its
// earlier time.
func (a *abilities) set(p party, able bool, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch _, was := a.since[p]; {
	case !able:
		delete(a.since, p)
	case !was:
		a.since[p] = t
	}
}

// ableSince is the latest of the parties' times: since when all of them
// have been able to act; false while one of them cannot.
func (a *abilities) ableSince(ps []party) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var latest time.Time
	for _, p := range ps {
		t, ok := a.since[p]
		if !ok {
			return time.Time{}, false
		}
		if t.After(latest) {
			latest = t
		}
	}
	return latest, true
}

// sampleAbilities reads, every second until ctx ends, which replica of each
// manager leads (leader_election_master_status), whether the MetalLB driver
// leader's gate is open (metallb_iad_metallb_ready), and MetalLB's log for
// its starts and catch-ups, or the Cilium operator's lease; kills of the
// allocator are told through mk.
func sampleAbilities(ctx context.Context, e *env, ab *abilities, mk *allocatorKills, tail *logTail) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		now := time.Now()
		core, driver := false, false
		for _, r := range e.managers[kindCore] {
			core = core || leadsAndReady(ctx, r.metricsURL, coreLease, false)
		}
		for _, r := range e.managers[kindDriver] {
			driver = driver || leadsAndReady(ctx, r.metricsURL, e.b.lease, e.b.gated)
		}
		ab.set(partyCore, core, now)
		ab.set(partyDriver, driver, now)
		if e.cfg.Cilium {
			acquired, ok := ciliumAcquired(ctx, e)
			ab.set(partyAllocator, ok && acquired.After(mk.last()), now)
		} else {
			c := tail.read()
			ab.set(partyAllocator, !c.CaughtUp.IsZero() && !c.Started.Before(mk.last().Truncate(time.Second)), now)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// leadsAndReady reads a replica's metrics: whether it holds lease and, when
// gate, whether its MetalLB gate is open.
func leadsAndReady(ctx context.Context, url, lease string, gate bool) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := runkit.Get(ctx, url)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	m, err := promtext.Parse(resp.Body, "leader_election_master_status", "metallb_iad_metallb_ready")
	if err != nil {
		return false
	}
	leads := false
	for _, s := range m["leader_election_master_status"] {
		leads = leads || s.Labels["name"] == lease && s.Value == 1
	}
	if !leads || !gate {
		return leads
	}
	ready := m["metallb_iad_metallb_ready"]
	return len(ready) == 1 && ready[0].Value == 1
}

// ciliumAcquired is when the Cilium operator took its lease, if a live
// holder has it (renewed within its duration).
func ciliumAcquired(ctx context.Context, e *env) (time.Time, bool) {
	l, err := e.cs.CoordinationV1().Leases(cluster.CiliumNamespace).Get(ctx, ciliumLease, metav1.GetOptions{})
	if err != nil || l.Spec.AcquireTime == nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	live := time.Since(l.Spec.RenewTime.Time) <= time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
	return l.Spec.AcquireTime.Time, live
}

// allocatorKills is the time of the last kill of the allocator: a MetalLB
// catch-up logged, or a Cilium lease taken, before it is over.
type allocatorKills struct {
	mu sync.Mutex
	at time.Time
}

func (m *allocatorKills) killed(t time.Time) {
	m.mu.Lock()
	m.at = t
	m.mu.Unlock()
}

func (m *allocatorKills) last() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at
}

// logTail reads MetalLB's log as it grows and keeps what it says of the
// last start (see metallblog).
type logTail struct {
	path    string
	mu      sync.Mutex
	offset  int64
	partial []byte
	state   metallblog.State
}

// handledAfter is metallblog.State.HandledAfter on what was read so far.
func (t *logTail) handledAfter(key string, after time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state.HandledAfter(key, after)
}

func (t *logTail) read() metallblog.CatchUp {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.Open(t.path)
	if err != nil {
		return t.state.CatchUp()
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return t.state.CatchUp()
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return t.state.CatchUp()
	}
	t.offset += int64(len(data))
	data = append(t.partial, data...)
	last := bytes.LastIndexByte(data, '\n')
	t.partial = append([]byte(nil), data[last+1:]...)
	sc := bufio.NewScanner(bytes.NewReader(data[:last+1]))
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		t.state.Feed(sc.Bytes())
	}
	return t.state.CatchUp()
}
