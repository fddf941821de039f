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

package testkit

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Killer lets a process's writes through until, once armed, the n-th write
// (events and leases aside) has reached the API server; after that every
// write fails, as if the process had been killed right there (n = 0: before
// its first write).
type Killer struct {
	n       int
	ignored []string
	armed   atomic.Bool
	mu      sync.Mutex
	written []string
	dead    chan struct{}
}

// NewKiller returns a killer whose n-th write, once armed, is the last.
func NewKiller(n int) *Killer { return &Killer{n: n, dead: make(chan struct{})} }

// Config returns a copy of cfg whose writes go through the killer.
func (k *Killer) Config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(k.wrap)
	return cfg
}

// Ignore lets writes whose path contains one of parts through uncounted:
// writes of the process's own that are no step of what is tested (a
// backend's liveness probes, say). Call it before Arm.
func (k *Killer) Ignore(parts ...string) { k.ignored = append(k.ignored, parts...) }

// Arm starts counting writes. A killer of n = 0 is dead at once: every
// write fails.
func (k *Killer) Arm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.armed.Swap(true) || k.n > 0 {
		return
	}
	close(k.dead)
}

// Dead is closed once the n-th write has gone through.
func (k *Killer) Dead() <-chan struct{} { return k.dead }

// Written lists the writes counted, as "METHOD path".
func (k *Killer) Written() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.written...)
}

func (k *Killer) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet || k.ignores(req.URL.Path) {
			return rt.RoundTrip(req)
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if !k.armed.Load() {
			return rt.RoundTrip(req)
		}
		if len(k.written) >= k.n {
			return nil, errors.New("killed")
		}
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 {
			k.written = append(k.written, req.Method+" "+req.URL.Path)
			if len(k.written) == k.n {
				close(k.dead)
			}
		}
		return resp, err
	})
}

func (k *Killer) ignores(path string) bool {
	return strings.Contains(path, "/events") || strings.Contains(path, "/leases") ||
		slices.ContainsFunc(k.ignored, func(part string) bool { return strings.Contains(path, part) })
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
