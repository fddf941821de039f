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
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/cluster"
)

const (
	// placeholderNamespace is where the MetalLB driver keeps its
	// placeholders (backend.placeholderNamespace says the run's).
	placeholderNamespace = "metallb-iad-system"
	// systemNamespace holds the managers' leader leases.
	systemNamespace = "address-system"
	// tenantNamespace holds the workload's claims and Services.
	tenantNamespace = "chaos"
	// The managers' default lease names.
	coreLease = "address-controller.local.sdn.cozystack.io"
	// The managers' kinds, which key env.managers and prefix their
	// replicas' names.
	kindCore   = "core"
	kindDriver = "driver"
)

// env is a running chaos cluster: the control plane with the allocator
// (MetalLB or the Cilium operator) and two replicas of each manager.
type env struct {
	cfg     Config
	b       backend
	binDir  string // the managers' binaries, removed by stop
	cluster *cluster.Cluster
	c       client.Client
	cs      kubernetes.Interface
	// managers are the replicas by kind (kindCore, kindDriver).
	managers map[string][]*replica
}

// replica is one manager process, restarted under the same name, ports and
// log file after each kill.
type replica struct {
	name, bin  string
	args       []string
	metricsURL string
	mu         sync.Mutex
	p          *cluster.Process
}

func (r *replica) process() *cluster.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.p
}

func (r *replica) start(c *cluster.Cluster) error {
	p, err := c.StartProcess(r.name, r.bin, r.args...)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
	return nil
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// start brings up the cluster and two replicas of each manager, and waits
// until every replica serves its metrics. The two managers are built at
// once, after the control plane is up: built while it started, they
// starved the API server's start past envtest's timeout twice in four runs
// on two loaded cores.
func start(ctx context.Context, cfg Config) (_ *env, err error) {
	e, err := startCluster(ctx, cfg, cfg.backend().placeholderNamespace, systemNamespace)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.stop(true)
		}
	}()
	if e.binDir, err = os.MkdirTemp("", "chaos-managers-"); err != nil {
		return nil, err
	}
	cfg.logf("Building the managers")
	bins, err := e.build()
	if err != nil {
		return nil, err
	}
	for _, kind := range []string{kindCore, kindDriver} {
		for i := range 2 {
			r, err := e.newReplica(kind, bins[kind], i)
			if err != nil {
				return nil, err
			}
			if err := r.start(e.cluster); err != nil {
				return nil, err
			}
			e.managers[kind] = append(e.managers[kind], r)
		}
	}
	for _, rs := range e.managers {
		for _, r := range rs {
			if err := waitServing(ctx, r); err != nil {
				return nil, err
			}
		}
	}
	return e, nil
}

// startCluster brings up the control plane with the allocator, and makes
// namespaces and the tenants' namespace.
func startCluster(ctx context.Context, cfg Config, namespaces ...string) (_ *env, err error) {
	e := &env{cfg: cfg, b: cfg.backend(), managers: map[string][]*replica{}}
	defer func() {
		if err != nil {
			e.stop(true)
		}
	}()
	cfg.logf("Starting the local control plane with %s", e.b.name)
	// MetalLB and LB-IPAM would both answer the workload's Services.
	opts := cluster.Options{KeepDir: cfg.KeepDir, WithoutMetalLB: cfg.Cilium, WithCilium: cfg.Cilium}
	if e.cluster, err = cluster.Start(opts); err != nil {
		return nil, err
	}
	if e.c, err = client.New(e.cluster.Config, client.Options{Scheme: newScheme()}); err != nil {
		return nil, err
	}
	if e.cs, err = kubernetes.NewForConfig(e.cluster.Config); err != nil {
		return nil, err
	}
	for _, ns := range append(namespaces, tenantNamespace) {
		if err := e.namespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// build builds both managers at once into e.binDir and gives their paths
// by kind.
func (e *env) build() (map[string]string, error) {
	pkgs := map[string]string{kindCore: "./cmd/address-controller", kindDriver: e.b.cmd}
	type built struct {
		kind, path string
		err        error
	}
	done := make(chan built, len(pkgs))
	for kind, pkg := range pkgs {
		go func() {
			path, err := cluster.GoBuild(pkg, e.binDir)
			done <- built{kind, path, err}
		}()
	}
	bins := map[string]string{}
	errs := make([]error, 0, len(pkgs))
	for range pkgs {
		r := <-done
		bins[r.kind] = r.path
		errs = append(errs, r.err)
	}
	return bins, errors.Join(errs...)
}

// newReplica gives a replica its own metrics and health ports, leader
// election in systemNamespace, and its kind's flags.
func (e *env) newReplica(kind, bin string, i int) (*replica, error) {
	metrics, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	health, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	r := &replica{
		name: fmt.Sprintf("%s-%d", kind, i), bin: bin,
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics),
		args: []string{"--kubeconfig", e.cluster.Kubeconfig,
			"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metrics), "--metrics-secure=false",
			"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(health),
			"--leader-elect", "--leader-election-namespace", systemNamespace},
	}
	if kind == kindDriver {
		r.args = append(r.args, e.b.driverArgs()...)
	}
	return r, nil
}

// waitServing waits until a replica serves metrics, which it does whether it
// leads or not.
func waitServing(ctx context.Context, r *replica) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		p := r.process()
		if !p.Running() {
			return fmt.Errorf("%s exited (code %d):\n%s", r.name, p.ExitCode(), tail(p.Log(), 3000))
		}
		if resp, err := http.Get(r.metricsURL); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s served no metrics at %s within a minute", r.name, r.metricsURL)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (e *env) namespace(ctx context.Context, name string) error {
	err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// stop stops every process; keep leaves the cluster's folder for reading.
func (e *env) stop(keep bool) {
	for _, rs := range e.managers {
		for _, r := range rs {
			if p := r.process(); p != nil {
				_ = p.Stop()
			}
		}
	}
	if e.binDir != "" {
		_ = os.RemoveAll(e.binDir)
	}
	if e.cluster == nil {
		return
	}
	if keep {
		e.cfg.logf("Keeping the cluster's folder, with every process's log: %s", e.cluster.Dir)
		e.cluster.Keep()
	}
	if err := e.cluster.Stop(); err != nil {
		e.cfg.logf("Stopping the cluster: %v", err)
	}
}
