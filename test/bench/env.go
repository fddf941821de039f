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
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/internal/tombstone"
	"github.com/cozystack/address-controller/test/cluster"
)

// env is a running benchmark cluster: the control plane with the driver's
// allocator, both managers as processes, a client that counts its own
// writes, and a watch cache whose events feed the running scenario.
type env struct {
	cfg Config
	// backend is the driver measured, and its allocator.
	backend *backend
	cluster *cluster.Cluster
	c       client.Client
	rc      rest.Interface
	cache   cache.Cache

	core, driver         *cluster.Process
	coreURL, driverURL   string
	ownWrites            *writeCounter
	handlers             handlers
	stopCache            context.CancelFunc
	coreArgs, driverArgs []string
	coreBin, driverBin   string

	// pprof are the managers' pprof handlers by process (with -pprof).
	pprof map[string]string

	// peers are the builds of the Cluster API in-cluster IPAM provider
	// whose binaries were given, by anchor, when the anchors run; each runs
	// during its own anchor only.
	peers map[string]*peerRun
}

// peerRun is a build of the peer and its process while its anchor runs.
type peerRun struct {
	peerBuild
	proc *cluster.Process
	url  string
}

// writeCounter counts the write requests a client sends.
type writeCounter struct {
	mu sync.Mutex
	n  float64
}

func (w *writeCounter) get() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

type countingTransport struct {
	next http.RoundTripper
	w    *writeCounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if writeVerbs[req.Method] {
		t.w.mu.Lock()
		t.w.n++
		t.w.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

// start brings up the cluster and both managers.
func start(ctx context.Context, cfg Config) (_ *env, err error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	d, err := backendNamed(cfg.Driver)
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, backend: d, ownWrites: &writeCounter{}}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	cfg.logf("Starting the local control plane with %s", d.title)
	crds := []string{filepath.Join(root, "test", "bench", "testdata", "crds")}
	if cfg.Anchors && cfg.PeerAssets != "" {
		crds = append(crds, filepath.Join(cfg.PeerAssets, "crds"))
	}
	opts := cluster.Options{ExtraCRDDirs: crds, KeepDir: cfg.KeepDir}
	d.cluster(&opts)
	e.cluster, err = cluster.Start(opts)
	if err != nil {
		return nil, err
	}

	// The managers' clients have no client-side rate limit
	// (controller-runtime's GetConfig sets QPS -1); the benchmark's client
	// gets the values it was given, the same by default.
	restCfg := rest.CopyConfig(e.cluster.Config)
	restCfg.QPS, restCfg.Burst = cfg.QPS, cfg.Burst
	restCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, w: e.ownWrites} })
	scheme := manager.NewScheme()
	if e.c, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	e.rc = cs.Discovery().RESTClient()
	if err := e.watch(ctx, restCfg); err != nil {
		return nil, err
	}
	for _, ns := range []string{d.placeholderNamespace} {
		if err := e.namespace(ctx, ns); err != nil {
			return nil, err
		}
	}

	cfg.logf("Building the managers")
	binDir := filepath.Join(e.cluster.Dir, "bin")
	e.coreBin, err = cluster.GoBuild("./cmd/address-controller", binDir)
	if err != nil {
		return nil, err
	}
	e.driverBin, err = cluster.GoBuild(d.cmd, binDir)
	if err != nil {
		return nil, err
	}
	corePort, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	driverPort, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	common := func(port int) []string {
		return []string{"--kubeconfig", e.cluster.Kubeconfig,
			"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(port), "--metrics-secure=false",
			"--health-probe-bind-address=0"}
	}
	e.coreArgs = append(common(corePort),
		"--claim-concurrency", strconv.Itoa(cfg.ClaimConcurrency),
		"--address-concurrency", strconv.Itoa(cfg.AddressConcurrency))
	e.driverArgs = append(common(driverPort), "--placeholder-namespace", d.placeholderNamespace)
	e.driverArgs = append(e.driverArgs, d.args...)
	e.driverArgs = append(e.driverArgs,
		"--concurrency", strconv.Itoa(cfg.DriverConcurrency),
		"--handoff", cfg.handoffs()[0])
	if cfg.Pprof {
		e.pprof = map[string]string{}
		for proc, args := range map[string]*[]string{procCore: &e.coreArgs, procDriver: &e.driverArgs} {
			port, err := cluster.FreePort()
			if err != nil {
				return nil, err
			}
			*args = append(*args, "--pprof-bind-address", "127.0.0.1:"+strconv.Itoa(port))
			e.pprof[proc] = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", port)
			cfg.logf("pprof of the %s at %s", proc, e.pprof[proc])
		}
	}
	e.coreURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", corePort)
	e.driverURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", driverPort)
	if err := e.startManagers(ctx, cfg.handoffs()[0]); err != nil {
		return nil, err
	}
	if cfg.Anchors {
		e.peers = map[string]*peerRun{}
		for _, b := range cfg.peerBuilds() {
			e.peers[b.anchor] = &peerRun{peerBuild: b}
		}
	}
	return e, nil
}

// startManagers starts both managers, the driver with handoff mode, and
// waits until both serve their metrics.
func (e *env) startManagers(ctx context.Context, mode string) error {
	var err error
	if e.core, err = e.cluster.StartProcess("address-controller", e.coreBin, e.coreArgs...); err != nil {
		return err
	}
	if err := waitServing(ctx, e.core, e.coreURL); err != nil {
		return err
	}
	return e.startDriver(ctx, mode)
}

// stopManagers stops both managers; their PIDs read 0 until they start
// again, so the scenarios in between report neither.
func (e *env) stopManagers() error {
	if err := e.driver.Stop(); err != nil {
		return err
	}
	return e.core.Stop()
}

// startPeer starts a build of the Cluster API in-cluster IPAM provider out
// of cluster, watching namespace ns alone, its webhooks off (webhook port
// 0), its metrics on a local port.
func (e *env) startPeer(ctx context.Context, anchor, ns string) error {
	p := e.peers[anchor]
	port, err := cluster.FreePort()
	if err != nil {
		return err
	}
	p.url = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	p.proc, err = e.cluster.StartProcess(ns, filepath.Join(p.assets, "manager"),
		"--kubeconfig", e.cluster.Kubeconfig,
		"--namespace", ns,
		"--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(port),
		"--health-probe-bind-address", "0",
		"--webhook-port", "0")
	if err != nil {
		return err
	}
	return waitServing(ctx, p.proc, p.url)
}

// waitQuiet waits until every controller-runtime process at urls answers
// with empty work queues and has reconciled nothing for five seconds (the
// managers' first passes over what is already there after a start; the
// peer's passes that go on after every claim has its address, some of them
// requeued with a back-off), limit at most.
func (e *env) waitQuiet(ctx context.Context, limit time.Duration, urls ...string) error {
	const window = 5 * time.Second
	// reading is the reconciles so far, or false when a queue is not empty
	// or a process did not answer.
	reading := func() (float64, bool) {
		var t float64
		for _, url := range urls {
			mc, ok, err := scrapeManager(ctx, url)
			if err != nil || !ok || mc.depth > 0 {
				return 0, false
			}
			for _, v := range mc.reconciles {
				t += v
			}
		}
		return t, true
	}
	deadline := time.Now().Add(limit)
	last, lastOK := reading()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
		}
		now, ok := reading()
		if ok && lastOK && now == last {
			return nil
		}
		last, lastOK = now, ok
	}
	return fmt.Errorf("still reconciling after %s", limit)
}

// restartDriver stops the driver and starts it again with handoff mode.
func (e *env) restartDriver(ctx context.Context, mode string) error {
	if err := e.driver.Stop(); err != nil {
		return err
	}
	return e.startDriver(ctx, mode)
}

// startDriver starts the driver with handoff mode and waits until it serves
// its metrics.
func (e *env) startDriver(ctx context.Context, mode string) error {
	args := slices.Clone(e.driverArgs)
	if i := slices.Index(args, "--handoff"); i >= 0 {
		args[i+1] = mode
	}
	var err error
	var env []string
	if limit, _ := memoryLimitBytes(e.cfg.DriverMemoryLimit); limit != "" {
		env = []string{manager.MemoryLimitEnv + "=" + limit}
	}
	if e.driver, err = e.cluster.StartProcessWithEnv(filepath.Base(e.backend.cmd), e.driverBin, env, args...); err != nil {
		return err
	}
	return waitServing(ctx, e.driver, e.driverURL)
}

// waitServing waits until a manager serves its metrics, which it does once
// its manager has started.
func waitServing(ctx context.Context, p *cluster.Process, url string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if !p.Running() {
			return fmt.Errorf("manager exited (code %d):\n%s", p.ExitCode(), tail(p.Log(), 3000))
		}
		if _, ok, err := scrapeManager(ctx, url); err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no metrics at %s within a minute:\n%s", url, tail(p.Log(), 3000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// stop ends everything start started.
func (e *env) stop() {
	if e.stopCache != nil {
		e.stopCache()
	}
	procs := make([]*cluster.Process, 0, 2+len(e.peers))
	procs = append(procs, e.driver, e.core)
	for _, p := range e.peers {
		procs = append(procs, p.proc)
	}
	for _, p := range procs {
		if p != nil {
			_ = p.Stop()
		}
	}
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}
}

func (e *env) namespace(ctx context.Context, name string) error {
	err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// deleteNamespace deletes a namespace and waits, ten minutes at most, until
// it is gone.
func (e *env) deleteNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s not deleted: %w", name, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// handlers are the running scenario's reactions to watch events, one per
// kind; nil means nobody listens. gone is true on deletion.
type handlers struct {
	mu                      sync.RWMutex
	claim, address, service func(obj client.Object, gone bool, at time.Time)
	// events counts Events by "reporter reason", creations and series
	// updates alike, for the whole run.
	eventsMu sync.Mutex
	events   map[string]float64
}

// eventCounts returns a copy of the Event counts so far.
func (h *handlers) eventCounts() map[string]float64 {
	h.eventsMu.Lock()
	defer h.eventsMu.Unlock()
	return maps.Clone(h.events)
}

func (h *handlers) countEvent(obj any) {
	ev, ok := tombstone.As[*eventsv1.Event](obj)
	if !ok {
		return
	}
	reporter := ev.ReportingController
	if reporter == "" {
		reporter = ev.DeprecatedSource.Component
	}
	h.eventsMu.Lock()
	defer h.eventsMu.Unlock()
	if h.events == nil {
		h.events = map[string]float64{}
	}
	h.events[reporter+" "+ev.Reason]++
}

func (h *handlers) set(claim, address, service func(client.Object, bool, time.Time)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.claim, h.address, h.service = claim, address, service
}

// onWanted is a Service handler that calls f with each live Service of ns
// that want names, and the IP want gives it.
func onWanted(ns string, want map[string]string,
	f func(svc *corev1.Service, ip string, at time.Time)) func(client.Object, bool, time.Time) {
	return func(o client.Object, gone bool, at time.Time) {
		svc := o.(*corev1.Service)
		if ip, ok := want[svc.Name]; ok && svc.Namespace == ns && !gone {
			f(svc, ip, at)
		}
	}
}

func (h *handlers) forward(pick func(*handlers) func(client.Object, bool, time.Time)) toolscache.ResourceEventHandler {
	call := func(obj any, gone bool) {
		at := time.Now()
		o, ok := tombstone.As[client.Object](obj)
		if !ok {
			return
		}
		h.mu.RLock()
		f := pick(h)
		h.mu.RUnlock()
		if f != nil {
			f(o, gone, at)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { call(obj, false) },
		UpdateFunc: func(_, obj any) { call(obj, false) },
		DeleteFunc: func(obj any) { call(obj, true) },
	}
}

// slimEvent keeps only what the Event counts need: events are the most
// numerous objects of a run.
func slimEvent(obj any) (any, error) {
	ev, ok := obj.(*eventsv1.Event)
	if !ok {
		return obj, nil
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion},
		Reason:              ev.Reason,
		ReportingController: ev.ReportingController,
		DeprecatedSource:    ev.DeprecatedSource,
	}, nil
}

// watch starts the benchmark's own informers on claims, addresses and
// Services: scenarios observe convergence through their events.
func (e *env) watch(ctx context.Context, cfg *rest.Config) error {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           manager.NewScheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&eventsv1.Event{}: {Transform: slimEvent}},
	})
	if err != nil {
		return err
	}
	evInf, err := c.GetInformer(ctx, &eventsv1.Event{})
	if err != nil {
		return err
	}
	_, err = evInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    e.handlers.countEvent,
		UpdateFunc: func(_, obj any) { e.handlers.countEvent(obj) },
	})
	if err != nil {
		return err
	}
	for _, w := range []struct {
		obj  client.Object
		pick func(*handlers) func(client.Object, bool, time.Time)
	}{
		{&v1alpha1.IPAddressClaim{}, func(h *handlers) func(client.Object, bool, time.Time) { return h.claim }},
		{&v1alpha1.IPAddress{}, func(h *handlers) func(client.Object, bool, time.Time) { return h.address }},
		{&corev1.Service{}, func(h *handlers) func(client.Object, bool, time.Time) { return h.service }},
		{&v1alpha1.IPAddressClass{}, nil},
	} {
		inf, err := c.GetInformer(ctx, w.obj)
		if err != nil {
			return err
		}
		if w.pick != nil {
			if _, err := inf.AddEventHandler(e.handlers.forward(w.pick)); err != nil {
				return err
			}
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	e.stopCache = cancel
	go func() { _ = c.Start(cctx) }()
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the benchmark's watch cache did not sync")
	}
	e.cache = c
	return nil
}
