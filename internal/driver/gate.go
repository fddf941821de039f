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

package driver

import (
	"context"
	"errors"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Parking runs again, once a Gate opens, the passes of one controller that
// the gate turned away. Wrap its reconciler with Wrap and add Source to its
// watches. A nil Parking (no gate) wraps nothing.
type Parking struct {
	gate Gate

	mu       sync.Mutex
	parked   map[reconcile.Request]struct{}
	queue    workqueue.TypedRateLimitingInterface[reconcile.Request]
	ctx      context.Context
	watching bool
}

// NewParking returns the parking of one controller for backend, or nil when
// backend has no Gate.
func NewParking(backend any) *Parking {
	g, ok := backend.(Gate)
	if !ok {
		return nil
	}
	return &Parking{gate: g, parked: map[reconcile.Request]struct{}{}}
}

// Wrap parks the passes of r that fail with ErrNotReady.
func (p *Parking) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	if p == nil {
		return r
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if errors.Is(err, ErrNotReady) {
			p.park(req)
			return reconcile.Result{}, nil
		}
		return res, err
	})
}

// Source is the event source that hands parked passes back to the
// controller's queue.
func (p *Parking) Source() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.queue, p.ctx = q, ctx
		return nil
	})
}

// park remembers req, and waits for the gate unless it already does.
func (p *Parking) park(req reconcile.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parked[req] = struct{}{}
	if p.watching || p.queue == nil {
		return
	}
	p.watching = true
	go p.await(p.gate.Opened())
}

// await hands every parked pass back once opened is closed.
func (p *Parking) await(opened <-chan struct{}) {
	select {
	case <-opened:
	case <-p.ctx.Done():
		return
	}
	p.mu.Lock()
	reqs, q := p.parked, p.queue
	p.parked, p.watching = map[reconcile.Request]struct{}{}, false
	p.mu.Unlock()
	for req := range reqs {
		q.Add(req)
	}
}
