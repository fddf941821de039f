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
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// shutGate is a Gate opened by hand.
type shutGate struct {
	mu     sync.Mutex
	opened chan struct{}
}

func (g *shutGate) Ready(context.Context) error { return ErrNotReady }

func (g *shutGate) Opened() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.opened
}

func (g *shutGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.opened)
	g.opened = make(chan struct{})
}

// TestParkedPassesRunAgainWhenTheGateOpens: a pass the backend turns away
// is no error and no retry; it is queued again once, when the gate opens,
// and only then. It runs in a synctest bubble, where "nothing is queued"
// is read once nothing more can be (see quiet), not after a guessed delay.
func TestParkedPassesRunAgainWhenTheGateOpens(t *testing.T) {
	synctest.Test(t, parkedPassesRunAgainWhenTheGateOpens)
}

// quiet lets an hour of the bubble's fake time pass, so that every timer
// (a delayed add, a retry) fires, and returns once every goroutine of the
// parking and the queue is blocked again.
func quiet() {
	time.Sleep(time.Hour)
	synctest.Wait()
}

func parkedPassesRunAgainWhenTheGateOpens(t *testing.T) {
	ctx := t.Context()
	gate := &shutGate{opened: make(chan struct{})}
	p := NewParking(struct {
		Gate
	}{gate})
	if p == nil {
		t.Fatal("a backend with a Gate gets a parking")
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	if err := p.Source().Start(ctx, queue); err != nil {
		t.Fatal(err)
	}
	failing := errors.New("something else")
	r := p.Wrap(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Name == "other" {
			return reconcile.Result{}, failing
		}
		return reconcile.Result{}, fmt.Errorf("writing: %w", ErrNotReady)
	}))

	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "b"}}
	for _, req := range []reconcile.Request{a, b, a} {
		if res, err := r.Reconcile(ctx, req); err != nil || !res.IsZero() {
			t.Fatalf("a parked pass returns nothing to retry, got %v, %v", res, err)
		}
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "other"}}); !errors.Is(err, failing) {
		t.Fatalf("other errors pass through, got %v", err)
	}
	quiet()
	if n := queue.Len(); n != 0 {
		t.Fatalf("nothing is queued while the gate is shut, got %d", n)
	}

	gate.open()
	got := map[reconcile.Request]bool{}
	for range 2 {
		req, _ := queue.Get()
		got[req] = true
		queue.Done(req)
	}
	if !got[a] || !got[b] {
		t.Fatalf("both parked passes run again, got %v", got)
	}
	quiet()
	if n := queue.Len(); n != 0 {
		t.Fatalf("each parked pass runs again once, %d more queued", n)
	}

	// Parked again, it waits for the next opening.
	if _, err := r.Reconcile(ctx, a); err != nil {
		t.Fatal(err)
	}
	quiet()
	if n := queue.Len(); n != 0 {
		t.Fatalf("the gate opened before is shut again, got %d queued", n)
	}
	gate.open()
	if req, _ := queue.Get(); req != a {
		t.Fatalf("got %v", req)
	}
}

// TestNoGateNoParking: a backend without a Gate is left alone.
func TestNoGateNoParking(t *testing.T) {
	if NewParking(struct{}{}) != nil {
		t.Fatal("no gate, no parking")
	}
	var p *Parking
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, ErrNotReady
	})
	if _, err := p.Wrap(r).Reconcile(context.Background(), reconcile.Request{}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("without a gate the error stands, got %v", err)
	}
}
