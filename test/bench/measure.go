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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/cozystack/address-controller/test/promtext"
	"github.com/cozystack/address-controller/test/runkit"
)

// writeVerbs are the verbs of apiserver_request_total that change state.
// Server-side apply is counted as APPLY by the API server.
var writeVerbs = map[string]bool{
	"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true,
}

// ownGroup is this project's API group, left out of resource names to keep
// the tables narrow; every other group is spelt out.
const ownGroup = "local.sdn.cozystack.io"

// apiWrites is what the API server counted: write requests by "VERB
// resource[/subresource]", and how many of them failed on a conflict, in
// all and by the same key.
type apiWrites struct {
	byKind          map[string]float64
	conflicts       float64
	conflictsByKind map[string]float64
}

// scrapeAPIServer reads apiserver_request_total from the API server's own
// /metrics through the admin client.
func scrapeAPIServer(ctx context.Context, rc rest.Interface) (apiWrites, error) {
	raw, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiWrites{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	m, err := promtext.Parse(strings.NewReader(string(raw)), "apiserver_request_total")
	if err != nil {
		return apiWrites{}, err
	}
	w := apiWrites{byKind: map[string]float64{}, conflictsByKind: map[string]float64{}}
	for _, s := range m["apiserver_request_total"] {
		verb := s.Labels["verb"]
		if !writeVerbs[verb] {
			continue
		}
		res := s.Labels["resource"]
		if g := s.Labels["group"]; g != "" && g != ownGroup {
			res += "." + g
		}
		if sub := s.Labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		w.byKind[verb+" "+res] += s.Value
		if s.Labels["code"] == "409" {
			w.conflicts += s.Value
			w.conflictsByKind[verb+" "+res] += s.Value
		}
	}
	return w, nil
}

func (w apiWrites) minus(before apiWrites) apiWrites {
	out := apiWrites{byKind: map[string]float64{}, conflicts: w.conflicts - before.conflicts, conflictsByKind: map[string]float64{}}
	for k, v := range w.byKind {
		if d := v - before.byKind[k]; d > 0 {
			out.byKind[k] = d
		}
	}
	for k, v := range w.conflictsByKind {
		if d := v - before.conflictsByKind[k]; d > 0 {
			out.conflictsByKind[k] = d
		}
	}
	return out
}

func (w apiWrites) total() float64 {
	var t float64
	for _, v := range w.byKind {
		t += v
	}
	return t
}

// managerCounters is one reading of a controller-runtime process's own
// counters: its write requests (rest_client_requests_total over the write
// methods), and per controller its reconciles
// (controller_runtime_reconcile_total) and work queue adds
// (workqueue_adds_total), which show how often it is woken.
type managerCounters struct {
	writes     float64
	reconciles map[string]float64
	adds       map[string]float64
	// unheld is the driver's address_driver_unheld_seconds histogram:
	// cumulative counts by upper bound ("le"), "+Inf" being all.
	unheld map[string]float64
	// depth is how many items wait in all its work queues (workqueue_depth).
	depth float64
	// memLimit is the GOMEMLIMIT its runtime applies, in bytes; 0: none.
	memLimit float64
}

// scrapeManager reads a manager's counters from its metrics endpoint. ok is
// false when the endpoint does not count its client's requests.
func scrapeManager(ctx context.Context, url string) (mc managerCounters, ok bool, err error) {
	if url == "" {
		return mc, false, nil
	}
	resp, err := runkit.Get(ctx, url)
	if err != nil {
		return mc, false, err
	}
	defer func() { _ = resp.Body.Close() }()
	m, err := promtext.Parse(resp.Body,
		"rest_client_requests_total", "controller_runtime_reconcile_total", "workqueue_adds_total",
		"address_driver_unheld_seconds_bucket", "workqueue_depth", "go_gc_gomemlimit_bytes")
	if err != nil {
		return mc, false, err
	}
	samples, ok := m["rest_client_requests_total"]
	for _, s := range samples {
		if writeVerbs[s.Labels["method"]] {
			mc.writes += s.Value
		}
	}
	mc.reconciles, mc.adds = map[string]float64{}, map[string]float64{}
	for _, s := range m["controller_runtime_reconcile_total"] {
		mc.reconciles[s.Labels["controller"]] += s.Value
	}
	for _, s := range m["workqueue_adds_total"] {
		mc.adds[s.Labels["name"]] += s.Value
	}
	for _, s := range m["workqueue_depth"] {
		mc.depth += s.Value
	}
	mc.unheld = map[string]float64{}
	for _, s := range m["address_driver_unheld_seconds_bucket"] {
		mc.unheld[s.Labels["le"]] += s.Value
	}
	// Without a limit the runtime reports math.MaxInt64.
	for _, s := range m["go_gc_gomemlimit_bytes"] {
		if s.Value < math.MaxInt64 {
			mc.memLimit = s.Value
		}
	}
	return mc, ok, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100

// procSample is a process's CPU time so far and memory.
type procSample struct {
	cpu               time.Duration
	rss, hwm, fileRSS uint64 // bytes
}

// readProc reads utime+stime from /proc/<pid>/stat and VmRSS, VmHWM and
// RssFile from /proc/<pid>/status.
func readProc(pid int) (procSample, error) {
	var ps procSample
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ps, err
	}
	// Fields after the parenthesised command name start at state (field 3);
	// utime and stime are fields 14 and 15.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return ps, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseUint(fields[11], 10, 64)
	stime, _ := strconv.ParseUint(fields[12], 10, 64)
	ps.cpu = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return ps, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		var field *uint64
		switch key {
		case "VmRSS":
			field = &ps.rss
		case "VmHWM":
			field = &ps.hwm
		case "RssFile":
			field = &ps.fileRSS
		}
		f := strings.Fields(value)
		if !ok || field == nil || len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseUint(f[0], 10, 64)
		*field = kb * 1024
	}
	return ps, nil
}

// resetPeak makes VmHWM start again from the current RSS (clear_refs value
// 5), so that a scenario's peak is its own. It reports whether that worked.
func resetPeak(pid int) bool {
	return os.WriteFile(filepath.Join("/proc", strconv.Itoa(pid), "clear_refs"), []byte("5"), 0) == nil
}

// childrenByName finds this process's children whose command name is one of
// names (the API server and etcd that envtest starts, say).
func childrenByName(names ...string) map[string]int {
	out := map[string]int{}
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		comm := s[open+1 : closing]
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 || fields[1] != self || !slices.Contains(names, comm) {
			continue
		}
		pid, _ := strconv.Atoi(e.Name())
		out[comm] = pid
	}
	return out
}

// progress is what a scenario's watch handlers record, guarded by one lock:
// named sets of keys, and first-seen times. Handlers poke it; waiters
// re-check their condition on every poke, never on a timer.
type progress struct {
	mu    sync.Mutex
	sets  map[string]map[string]bool
	times map[string]map[string]time.Time
	// seen are the keys of each set that an event has set or cleared.
	seen   map[string]map[string]bool
	notify chan struct{}
}

func newProgress() *progress {
	return &progress{
		sets:   map[string]map[string]bool{},
		times:  map[string]map[string]time.Time{},
		seen:   map[string]map[string]bool{},
		notify: make(chan struct{}, 1),
	}
}

// set adds key to set name (or removes it), and pokes waiters.
func (p *progress) set(name, key string, in bool) {
	p.mu.Lock()
	if p.seen[name] == nil {
		p.seen[name] = map[string]bool{}
	}
	p.seen[name][key] = true
	p.setLocked(name, key, in)
	p.mu.Unlock()
	p.poke()
}

// seed adds key to set name from a listing of the watch cache, unless an
// event has already set or cleared it: the listing is a snapshot, and an
// event handled between the snapshot and this call is newer than it (a
// placeholder deleted as a scenario starts must not come back).
func (p *progress) seed(name, key string) {
	p.mu.Lock()
	if !p.seen[name][key] {
		p.setLocked(name, key, true)
	}
	p.mu.Unlock()
	p.poke()
}

func (p *progress) setLocked(name, key string, in bool) {
	s := p.sets[name]
	if s == nil {
		s = map[string]bool{}
		p.sets[name] = s
	}
	if in {
		s[key] = true
	} else {
		delete(s, key)
	}
}

// stamp records the first time key reached milestone name.
func (p *progress) stamp(name, key string, at time.Time) {
	p.mu.Lock()
	t := p.times[name]
	if t == nil {
		t = map[string]time.Time{}
		p.times[name] = t
	}
	if _, ok := t[key]; !ok {
		t[key] = at
	}
	p.mu.Unlock()
	p.poke()
}

func (p *progress) poke() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// size is the number of keys in set name.
func (p *progress) size(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sets[name])
}

// some names up to n keys of set name, sorted, for an error message.
func (p *progress) some(name string, n int) string {
	p.mu.Lock()
	keys := slices.Sorted(maps.Keys(p.sets[name]))
	p.mu.Unlock()
	return strings.Join(keys[:min(len(keys), n)], ", ")
}

// at is when key reached milestone name, if it did.
func (p *progress) at(name, key string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.times[name][key]
	return t, ok
}

// stamped is the number of keys that reached milestone name.
func (p *progress) stamped(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.times[name])
}

// settle waits until done holds and gives the scenario's latencies, from
// milestone from to milestone to, of the keys that reached both; if the wait
// ends first, the error tells how far the scenario came (state).
func (p *progress) settle(ctx context.Context, from, to string, done func() bool, state func() string) (outcome, error) {
	err := p.wait(ctx, done)
	o := outcome{latencies: p.between(from, to)}
	if err != nil {
		return o, fmt.Errorf("%s: %w", state(), err)
	}
	return o, nil
}

// wait blocks until cond holds, re-checking it whenever a handler pokes.
func (p *progress) wait(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-p.notify:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitWhileShrinking waits until set is empty, as long as it shrinks at
// least once every stall.
func (p *progress) waitWhileShrinking(ctx context.Context, set string, stall time.Duration) error {
	for n := p.size(set); n > 0; n = p.size(set) {
		stallCtx, cancel := context.WithTimeout(ctx, stall)
		err := p.wait(stallCtx, func() bool { return p.size(set) < n })
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// between returns, for every key that reached both milestones, the time
// from the first to the second (never negative: a watch event may arrive a
// hair before the write that caused it returns).
func (p *progress) between(from, to string) []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	for key, end := range p.times[to] {
		if start, ok := p.times[from][key]; ok {
			out = append(out, max(end.Sub(start), 0))
		}
	}
	return out
}

// quantiles returns the p50 and p99 of ds, nearest rank.
func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return rank(0.50), rank(0.99)
}

// unheldStats summarises how many handoffs a scenario made and for how long
// each left the address unreported, from two readings of the driver's
// address_driver_unheld_seconds histogram: the share of handoffs with none
// at all, and the upper bound of the bucket that holds the 99th percentile.
func unheldStats(before, after map[string]float64) *Unheld {
	total := after["+Inf"] - before["+Inf"]
	if total <= 0 {
		return nil
	}
	type bucket struct{ le, count float64 }
	var buckets []bucket
	for le, v := range after {
		if le == "+Inf" {
			continue
		}
		f, err := strconv.ParseFloat(le, 64)
		if err != nil {
			continue
		}
		buckets = append(buckets, bucket{f, v - before[le]})
	}
	slices.SortFunc(buckets, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	u := &Unheld{Handoffs: total, P99Ms: -1}
	for _, b := range buckets {
		if b.le == 0 {
			u.Zero = b.count / total
		}
		if u.P99Ms < 0 && b.count >= 0.99*total {
			u.P99Ms = b.le * 1000
		}
	}
	return u
}

// liveHeap asks a manager's pprof handlers (base ends in /debug/pprof/) to
// collect garbage and returns the heap in use right after: HeapAlloc of
// the heap profile's text form.
func liveHeap(ctx context.Context, base string) (uint64, error) {
	resp, err := runkit.Get(ctx, base+"heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", base, resp.Status)
	}
	return heapAlloc(resp.Body)
}

// heapAlloc finds "# HeapAlloc = <bytes>" in a heap profile's text form.
func heapAlloc(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no HeapAlloc in the heap profile")
}
