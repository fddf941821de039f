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

package inprocess

import (
	"context"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cozystack/address-controller/internal/manager"
)

// Manager is a running manager.
type Manager struct {
	cancel context.CancelFunc
	// exited is closed once the manager returned, with err set.
	exited chan struct{}
	err    error
	once   sync.Once
	// report receives the error the manager stopped with, if any.
	report func(error)
}

// Start runs a manager for cfg, with the controllers setup registers, until
// the test ends or Stop is called. tune adjusts the manager's options.
func Start(t *testing.T, cfg *rest.Config, setup func(ctrl.Manager) error, tune ...func(*ctrl.Options)) *Manager {
	t.Helper()
	m, err := Run(cfg, setup, tune...)
	if err != nil {
		t.Fatal(err)
	}
	m.report = func(err error) { t.Errorf("manager: %v", err) }
	t.Cleanup(m.Stop)
	return m
}

// Run runs a manager as Start does, until Stop: for a manager that
// outlives any one test (a package's shared managers, started in TestMain).
func Run(cfg *rest.Config, setup func(ctrl.Manager) error, tune ...func(*ctrl.Options)) (*Manager, error) {
	opts := ctrl.Options{
		Scheme:                 manager.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests start the same controllers many times in one process.
		Controller: config.Controller{SkipNameValidation: new(true)},
	}
	manager.CacheDefaults(&opts)
	for _, f := range tune {
		f(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cancel: cancel, exited: make(chan struct{}), report: func(error) {}}
	go func() {
		defer close(m.exited)
		m.err = mgr.Start(ctx)
	}()
	return m, nil
}

// Stop stops the manager and waits for it to return.
func (m *Manager) Stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.exited
		if m.err != nil {
			m.report(m.err)
		}
	})
}

// Err is the error the manager returned with, once it has.
func (m *Manager) Err() error {
	select {
	case <-m.exited:
		return m.err
	default:
		return nil
	}
}

// Running says whether the manager has neither been stopped nor returned.
func (m *Manager) Running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}
