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
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	b "github.com/cozystack/address-controller/test/builder"
)

// Config is what to measure and how.
type Config struct {
	// Driver names the driver measured with its allocator ("metallb",
	// "cilium"); empty means MetalLB.
	Driver string
	// Sizes are the numbers of claims, run in this order.
	Sizes []int
	// Workers is how many requests the benchmark's client has in flight.
	Workers int
	// QPS and Burst are the benchmark's client-side rate limit; QPS < 0
	// turns it off, as controller-runtime does for the managers.
	QPS   float32
	Burst int
	// Concurrency of the managers' controllers.
	ClaimConcurrency, AddressConcurrency, DriverConcurrency int
	// DriverMemoryLimit is the driver's container memory limit ("256Mi"),
	// passed to it as its chart passes it; empty passes none.
	DriverMemoryLimit string
	// Unrelated is how many plain ClusterIP Services sit in another
	// namespace during the largest size; negative means the largest size.
	Unrelated int
	// Scenarios picks scenarios by letter ("a", "b", ...); empty runs all.
	// Association and teardown need the driver's path before them.
	Scenarios []string
	// Pprof serves each manager's pprof handlers on a local port (logged),
	// for profiling a run by hand.
	Pprof bool
	// KeepDir keeps the cluster's folder (every process's log) after the
	// run; a run with a scenario that did not converge keeps it anyway.
	KeepDir bool
	// WireRebuilds is how many rebuilds the wire scenario measures (letter
	// "w"; it needs root); 0 skips it.
	WireRebuilds int
	// Settle is how long to wait after convergence before reading the
	// counters, so that trailing writes of a scenario count as its own.
	Settle time.Duration
	// Handoffs are the driver's --handoff modes to measure: the driver's
	// path, association and teardown run once per mode, the driver
	// restarted in between; empty means auto alone.
	Handoffs []string
	// Anchors runs, beside the product's scenarios, what a user would run
	// instead (anchors.go): the peer beside a, the allocator alone beside
	// b, pinned Services beside c.
	Anchors bool
	// PeerAssets is the folder holding the Cluster API in-cluster IPAM
	// provider's manager and crds/ (make capi-ipam); empty skips the peer.
	PeerAssets string
	// PeerUnthrottledAssets is the folder holding the same release's
	// manager built with controller-runtime v0.21 or later, whose client has
	// no rate limit (make capi-ipam-unthrottled); it uses PeerAssets' CRDs.
	// Empty skips it.
	PeerUnthrottledAssets string
	// Log reports progress; nil is silent.
	Log func(format string, args ...any)
}

// peerBuilds are the builds of the peer whose binaries were given.
func (c Config) peerBuilds() []peerBuild {
	var out []peerBuild
	if c.PeerAssets == "" {
		return nil
	}
	out = append(out, peerBuild{anchor: anchorPeer, assets: c.PeerAssets})
	if c.PeerUnthrottledAssets != "" {
		out = append(out, peerBuild{anchor: anchorPeerUnthrottled, assets: c.PeerUnthrottledAssets})
	}
	return out
}

func (c Config) handoffs() []string {
	if len(c.Handoffs) == 0 {
		return []string{"auto"}
	}
	return c.Handoffs
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// timeoutFor bounds how long a scenario of n claims may take to converge:
// five minutes and 300 ms a claim (55 minutes for 10,000), a bound well
// above what any size measured so far took, not an estimate.
func timeoutFor(n int) time.Duration {
	return 5*time.Minute + time.Duration(n)*300*time.Millisecond
}

// Run starts a cluster with both managers, measures every size, and stops
// everything again.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	report := &Report{Machine: machine(), Settings: Settings{
		Workers: cfg.Workers, QPS: cfg.QPS, Burst: cfg.Burst,
		ClaimConcurrency:   cfg.ClaimConcurrency,
		AddressConcurrency: cfg.AddressConcurrency,
		DriverConcurrency:  cfg.DriverConcurrency,
		DriverMemoryLimit:  cfg.DriverMemoryLimit,
	}}
	e, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	report.Settings.Driver, report.Settings.Allocator = e.backend.name, e.backend.title
	report.Settings.CoreArgs, report.Settings.DriverArgs = redact(e.coreArgs), redact(e.driverArgs)
	for name, p := range e.peers {
		if report.Settings.Peers == nil {
			report.Settings.Peers = map[string]string{}
		}
		report.Settings.Peers[name] = peerTitle(p.assets)
	}

	// The wire scenario runs first, on an empty cluster: the speaker
	// caches every Service, and the sizes leave thousands behind.
	if cfg.WireRebuilds > 0 && (len(cfg.Scenarios) == 0 || slices.Contains(cfg.Scenarios, "w")) {
		report.Wire = e.wireScenario(ctx, cfg.WireRebuilds)
	}
	if len(cfg.Scenarios) > 0 && !slices.ContainsFunc(cfg.Scenarios, func(s string) bool { return s != "w" }) {
		return report, nil
	}

	largest := 0
	for _, n := range cfg.Sizes {
		largest = max(largest, n)
	}
	unrelated := cfg.Unrelated
	if unrelated < 0 {
		unrelated = largest
	}
	present := 0
	for i, n := range cfg.Sizes {
		if n == largest && unrelated > present {
			cfg.logf("Creating %d unrelated ClusterIP Services", unrelated)
			t := time.Now()
			if err := e.unrelatedServices(ctx, present, unrelated); err != nil {
				return report, err
			}
			present = unrelated
			cfg.logf("Created them in %s", time.Since(t).Round(time.Millisecond))
		}
		run, err := e.measureSize(ctx, i, n, present)
		if err != nil {
			return report, err
		}
		report.Sizes = append(report.Sizes, run)
	}
	return report, nil
}

// measureSize measures the ceiling and the chosen scenarios of the i-th
// size, n claims, once per handoff mode, with unrelated Services present.
// Every mode gets namespaces and classes of its own, cleaned up after
// unless it is the last mode of the last size.
func (e *env) measureSize(ctx context.Context, i, n, unrelated int) (Size, error) {
	cfg := e.cfg
	run := Size{N: n, Unrelated: unrelated}
	cfg.logf("N=%d: measuring the ceiling", n)
	var err error
	if run.Ceiling, err = e.ceiling(ctx, n); err != nil {
		return run, err
	}
	cfg.logf("N=%d: ceiling %.0f writes/s", n, run.Ceiling.WritesPerSecond)
	anchors, err := e.measureAnchors(ctx, i, n)
	run.Scenarios = append(run.Scenarios, anchors...)
	if err != nil {
		return run, err
	}
	lastSize := i == len(cfg.Sizes)-1
	modes := cfg.handoffs()
	for m, mode := range modes {
		if m > 0 {
			cfg.logf("N=%d: restarting the driver with --handoff=%s", n, mode)
			if err := e.restartDriver(ctx, mode); err != nil {
				return run, err
			}
		}
		s := newSizeRun(e, i+m*len(cfg.Sizes), n)
		if m > 0 {
			s.driverNS += "-" + mode
			s.driverClass += "-" + mode
		}
		suffix := ""
		if len(modes) > 1 {
			suffix = "-" + mode
		}
		run.Scenarios = append(run.Scenarios, e.measureScenarios(ctx, s, run.Ceiling, m == 0, suffix)...)
		if !lastSize || m < len(modes)-1 {
			if err := s.cleanup(ctx); err != nil {
				cfg.logf("N=%d: cleaning up: %v", n, err)
			}
		}
	}
	run.Comparisons = run.comparisons()
	if len(modes) > 1 && !lastSize {
		if err := e.restartDriver(ctx, modes[0]); err != nil {
			return run, err
		}
	}
	return run, nil
}

// measureScenarios runs the chosen scenarios of one size in one handoff
// mode, in order, and stops at the first that does not converge: the later
// ones build on it. The static path ("a") does not go through the driver,
// so it runs in the first mode only; the others' names get the mode's
// suffix.
func (e *env) measureScenarios(ctx context.Context, s *sizeRun, ceiling Ceiling, firstMode bool, suffix string) []Result {
	cfg, n := e.cfg, s.n
	var results []Result
	for _, sc := range s.scenarios() {
		letter := sc.name[:1]
		if len(cfg.Scenarios) > 0 && !slices.Contains(cfg.Scenarios, letter) || !firstMode && letter == "a" {
			continue
		}
		if letter != "a" {
			sc.name += suffix
		}
		cfg.logf("N=%d: scenario %s", n, sc.name)
		res := e.measure(ctx, sc, n, ceiling)
		cfg.logf("N=%d: %s converged=%v in %.1fs (%.1f claims/s, p50 %.0fms, p99 %.0fms, %.2f writes/claim)",
			n, sc.name, res.Converged, res.Seconds, res.PerSecond, res.P50Ms, res.P99Ms, res.WritesPerClaim)
		results = append(results, res)
		if !res.Converged {
			e.cluster.Keep()
			cfg.logf("N=%d: %s did not converge; keeping the cluster's folder %s", n, sc.name, e.cluster.Dir)
			break
		}
	}
	return results
}

// redact drops the kubeconfig path (a temporary folder) from arguments.
func redact(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--kubeconfig" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// scenario is one measured step: setup is not measured, body is.
type scenario struct {
	name      string
	minWrites int
	setup     func(ctx context.Context) error
	body      func(ctx context.Context) (outcome, error)
	// objects, if set, reads the scenario's objects once it converged.
	objects func(ctx context.Context) ([]ObjectSize, error)
}

// outcome is what a scenario's body observed: per-claim latencies, the
// stages of its path, and when it converged (zero: when it returned).
type outcome struct {
	latencies []time.Duration
	stages    []Stage
	end       time.Time
}

// measure runs a scenario between two readings of every counter.
func (e *env) measure(ctx context.Context, sc scenario, n int, ceiling Ceiling) Result {
	res := Result{Scenario: sc.name, N: n, MinWrites: sc.minWrites}
	ctx, cancel := context.WithTimeout(ctx, timeoutFor(n))
	defer cancel()
	defer e.handlers.set(nil, nil, nil)
	if sc.setup != nil {
		if err := sc.setup(ctx); err != nil {
			res.Error = "setup: " + err.Error()
			return res
		}
	}
	pids := e.pids()
	reset := map[string]bool{}
	cpuBefore := map[string]time.Duration{}
	for name, pid := range pids {
		reset[name] = resetPeak(pid)
		if ps, err := readProc(pid); err == nil {
			cpuBefore[name] = ps.cpu
		}
	}
	before, errBefore := e.counters(ctx)
	eventsBefore := e.handlers.eventCounts()
	start := time.Now()
	out, err := sc.body(ctx)
	if out.end.IsZero() {
		out.end = time.Now()
	}
	wall := out.end.Sub(start)
	latencies, stages := out.latencies, out.stages
	if err != nil {
		res.Error = err.Error()
	} else {
		res.Converged = true
	}
	select {
	case <-time.After(e.cfg.Settle):
	case <-ctx.Done():
	}
	// Counters are read with a fresh context: a scenario that timed out
	// still reports what it did.
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	after, errAfter := e.counters(rctx)
	res.Events = map[string]float64{}
	for k, v := range e.handlers.eventCounts() {
		if d := v - eventsBefore[k]; d > 0 {
			res.Events[k] = d / float64(n)
		}
	}

	res.Seconds = wall.Seconds()
	res.PerSecond = float64(n) / wall.Seconds()
	p50, p99 := quantiles(latencies)
	res.P50Ms, res.P99Ms = ms(p50), ms(p99)
	res.Stages = stages
	res.Processes = e.processStats(rctx, pids, cpuBefore, reset, after.memLimits)
	if errBefore != nil || errAfter != nil {
		res.Error = strings.TrimSpace(res.Error + fmt.Sprintf(" reading counters: %v %v", errBefore, errAfter))
		return res
	}
	if sc.objects != nil && res.Converged {
		objs, err := sc.objects(rctx)
		res.Objects = objs
		if err != nil {
			e.cfg.logf("N=%d: %s: reading its objects: %v", n, sc.name, err)
		}
	}
	res.addCounts(before, after, otherClients(e.backend.title))
	if ceiling.WritesPerSecond > 0 && sc.minWrites > 0 {
		res.CeilingRatio = res.PerSecond / (ceiling.WritesPerSecond / float64(sc.minWrites))
	}
	return res
}

// processStats reads each process's memory and the CPU it used since
// cpuBefore.
func (e *env) processStats(ctx context.Context, pids map[string]int, cpuBefore map[string]time.Duration,
	reset map[string]bool, memLimits map[string]float64) map[string]ProcStats {
	out := map[string]ProcStats{}
	for name, pid := range pids {
		ps, err := readProc(pid)
		if err != nil {
			continue
		}
		st := ProcStats{PeakRSSMiB: mib(ps.hwm), RSSMiB: mib(ps.rss), FileRSSMiB: mib(ps.fileRSS),
			CPUSeconds: (ps.cpu - cpuBefore[name]).Seconds(), PeakSinceStart: !reset[name]}
		if url, ok := e.pprof[name]; ok {
			if live, err := liveHeap(ctx, url); err == nil {
				st.LiveHeapMiB = mib(live)
			}
		}
		if limit, ok := memLimits[name]; ok {
			st.MemoryLimitMiB = mib(uint64(limit))
		}
		out[name] = st
	}
	return out
}

// addCounts sets what the counters moved by between before and after, per
// claim; the writes no client counted as its own go to other.
func (res *Result) addCounts(before, after counterSet, other string) {
	writes := after.api.minus(before.api)
	per := func(v float64) float64 { return v / float64(res.N) }
	if before.etcdReceived > 0 && after.etcdReceived > 0 {
		res.EtcdBytesPerClaim = per(after.etcdReceived - before.etcdReceived)
	}
	res.Writes = map[string]float64{}
	for k, v := range writes.byKind {
		res.Writes[k] = per(v)
	}
	res.WritesPerClaim = per(writes.total())
	res.ConflictsPerClaim = per(writes.conflicts)
	res.Conflicts = map[string]float64{}
	for k, v := range writes.conflictsByKind {
		res.Conflicts[k] = per(v)
	}
	res.ByClient = map[string]float64{}
	unclaimed := writes.total()
	for name, v := range after.clients {
		if was, ok := before.clients[name]; ok {
			res.ByClient[name] = per(v - was)
			unclaimed -= v - was
		}
	}
	res.ByClient[other] = per(unclaimed)
	res.Reconciles, res.QueueAdds = map[string]float64{}, map[string]float64{}
	for k, v := range after.reconciles {
		if d := v - before.reconciles[k]; d > 0 {
			res.Reconciles[k] = per(d)
		}
	}
	for k, v := range after.adds {
		if d := v - before.adds[k]; d > 0 {
			res.QueueAdds[k] = per(d)
		}
	}
	res.Unheld = unheldStats(before.unheld, after.unheld)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(n uint64) float64       { return float64(n) / (1 << 20) }

// pids are the processes whose memory and CPU a scenario reports.
func (e *env) pids() map[string]int {
	out := map[string]int{}
	if pid := e.core.PID(); pid > 0 {
		out[procCore] = pid
	}
	if pid := e.driver.PID(); pid > 0 {
		out[procDriver] = pid
	}
	if pid := e.backend.pid(e.cluster); pid > 0 {
		out[e.backend.name] = pid
	}
	for name, p := range e.peers {
		if p.proc != nil {
			if pid := p.proc.PID(); pid > 0 {
				out[name] = pid
			}
		}
	}
	maps.Copy(out, childrenByName("kube-apiserver", "etcd"))
	out[procBench] = os.Getpid()
	return out
}

// counterSet is one reading of the API server's write counters, of each
// client's own, and of the managers' reconciles and queue adds by
// "manager/controller".
type counterSet struct {
	api              apiWrites
	clients          map[string]float64
	reconciles, adds map[string]float64
	unheld           map[string]float64
	// memLimits are the GOMEMLIMITs the processes' runtimes apply, in
	// bytes, of those that have one.
	memLimits map[string]float64
	// etcdReceived is the bytes etcd received from its clients so far; 0
	// when its metrics could not be read.
	etcdReceived float64
}

func (e *env) counters(ctx context.Context) (counterSet, error) {
	api, err := scrapeAPIServer(ctx, e.rc)
	if err != nil {
		return counterSet{}, err
	}
	cs := counterSet{api: api, clients: map[string]float64{procBench: e.ownWrites.get()},
		reconciles: map[string]float64{}, adds: map[string]float64{}, memLimits: map[string]float64{}}
	if received, err := e.etcdReceivedBytes(ctx); err == nil {
		cs.etcdReceived = received
	}
	endpoints := map[string]string{procCore: e.coreURL, procDriver: e.driverURL, e.backend.name: e.backend.metrics(e.cluster)}
	for name, p := range e.peers {
		if p.proc != nil && p.proc.Running() {
			endpoints[name] = p.url
		}
	}
	for name, url := range endpoints {
		if url == "" {
			continue
		}
		mc, ok, err := scrapeManager(ctx, url)
		if err != nil || !ok {
			continue
		}
		cs.clients[name] = mc.writes
		if name == procDriver {
			cs.unheld = mc.unheld
		}
		if mc.memLimit > 0 {
			cs.memLimits[name] = mc.memLimit
		}
		for c, v := range mc.reconciles {
			cs.reconciles[name+"/"+c] = v
		}
		for c, v := range mc.adds {
			cs.adds[name+"/"+c] = v
		}
	}
	return cs, nil
}

// parallel runs f for 0..n-1 with at most workers at once and returns the
// first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// writeEach writes obj(i) for 0..n-1 with write (the client's create or
// delete), cfg.Workers at once, and stamps each in p under stamp once its
// write returned.
func (e *env) writeEach(ctx context.Context, n int, p *progress, stamp string,
	write func(context.Context, client.Object) error, obj func(i int) client.Object) error {
	return parallel(ctx, n, e.cfg.Workers, func(ctx context.Context, i int) error {
		o := obj(i)
		if err := write(ctx, o); err != nil {
			return err
		}
		p.stamp(stamp, o.GetName(), time.Now())
		return nil
	})
}

// createEach creates obj(i) for 0..n-1 and stamps each "created" in p: see
// writeEach.
func (e *env) createEach(ctx context.Context, n int, p *progress, obj func(i int) client.Object) error {
	create := func(ctx context.Context, o client.Object) error { return e.c.Create(ctx, o) }
	return e.writeEach(ctx, n, p, "created", create, obj)
}

// ceiling measures how fast the API server creates and status-updates a
// trivial custom object: n objects, each created then status-patched by the
// same workers and client as the scenarios use.
func (e *env) ceiling(ctx context.Context, n int) (Ceiling, error) {
	ns := fmt.Sprintf("bench-ceiling-%d", n)
	if err := e.namespace(ctx, ns); err != nil {
		return Ceiling{}, err
	}
	before, err := scrapeAPIServer(ctx, e.rc)
	if err != nil {
		return Ceiling{}, err
	}
	apiServer := e.pids()["kube-apiserver"]
	cpuBefore, _ := readProc(apiServer)
	etcdBefore, _ := e.etcdReceivedBytes(ctx)
	start := time.Now()
	err = parallel(ctx, n, e.cfg.Workers, func(ctx context.Context, i int) error {
		u := probe(ns, fmt.Sprintf("probe-%05d", i))
		if err := e.c.Create(ctx, u); err != nil {
			return err
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"observed":"yes"}}`, u.GetResourceVersion())
		return e.c.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)))
	})
	elapsed := time.Since(start)
	if err != nil {
		return Ceiling{}, fmt.Errorf("ceiling: %w", err)
	}
	after, err := scrapeAPIServer(ctx, e.rc)
	if err != nil {
		return Ceiling{}, err
	}
	writes := after.minus(before).total()
	c := Ceiling{Objects: n, Seconds: elapsed.Seconds(), Writes: writes, WritesPerSecond: writes / elapsed.Seconds()}
	if cpuAfter, err := readProc(apiServer); err == nil && cpuBefore.cpu > 0 {
		c.APIServerCPUSeconds = (cpuAfter.cpu - cpuBefore.cpu).Seconds()
	}
	if etcdAfter, err := e.etcdReceivedBytes(ctx); err == nil && etcdBefore > 0 {
		c.EtcdBytesPerWrite = (etcdAfter - etcdBefore) / writes
	}
	if o, _, err := e.objectSize(ctx, objectRef{kind: "probe", group: probeGroup, version: probeVersion,
		resource: "probes", namespace: ns, name: "probe-00000"}); err == nil {
		c.Object = &o
	}
	// Out of the way of the scenarios: one request, the API server does the rest.
	if err := e.c.DeleteAllOf(ctx, probe(ns, ""), client.InNamespace(ns)); err != nil {
		return c, err
	}
	return c, nil
}

// probeGroup and probeVersion are the ceiling's trivial kind's
// (testdata/crds/probes.yaml).
const probeGroup, probeVersion = "bench.local.sdn.cozystack.io", "v1alpha1"

func probe(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(probeGroup + "/" + probeVersion)
	u.SetKind("Probe")
	u.SetNamespace(ns)
	u.SetName(name)
	if name != "" {
		_ = unstructured.SetNestedField(u.Object, "x", "spec", "value")
	}
	return u
}

// unrelatedServices fills the unrelated namespace up to n plain ClusterIP
// Services, which every manager watching Services caches.
func (e *env) unrelatedServices(ctx context.Context, from, n int) error {
	const ns = "bench-unrelated"
	if err := e.namespace(ctx, ns); err != nil {
		return err
	}
	return parallel(ctx, n-from, e.cfg.Workers, func(ctx context.Context, i int) error {
		return e.c.Create(ctx, b.Service(ns, fmt.Sprintf("unrelated-%05d", from+i), b.ClusterIPOnly()))
	})
}

// machine describes the host.
func machine() Machine {
	m := Machine{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Cores: runtime.NumCPU(), Go: runtime.Version()}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.MemoryGiB = kb / (1 << 20)
			}
		}
	}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(raw)); len(f) >= 3 {
			m.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	return m
}
