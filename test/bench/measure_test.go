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
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"testing"
	"time"
)

func TestWaitWhileShrinkingWaitsForProgressNotForAFixedTime(t *testing.T) {
	p := newProgress()
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		p.set("assigned", k, true)
	}
	// A key goes every 300 ms: 1.2 s in all, past the stall of a second,
	// but never a second without progress.
	go func() {
		for _, k := range keys {
			time.Sleep(300 * time.Millisecond)
			p.set("assigned", k, false)
		}
	}()
	start := time.Now()
	if err := p.waitWhileShrinking(context.Background(), "assigned", time.Second); err != nil {
		t.Fatalf("a set that shrinks within every stall: %v", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("returned after %s, before the last key went", waited)
	}

	p.set("assigned", "stuck", true)
	start = time.Now()
	err := p.waitWhileShrinking(context.Background(), "assigned", 50*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a set that never shrinks: got %v, want a deadline", err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before the stall of 50ms", waited)
	}
}

// A teardown lists the watch cache after its handlers are on. A placeholder
// listed there and deleted before the listing is applied must stay gone:
// Cilium's teardowns at 1,000 claims never converged while it came back.
func TestAListingNeverUndoesANewerEvent(t *testing.T) {
	p := newProgress()
	p.set("placeholders", "deleted-meanwhile", false)
	p.seed("placeholders", "deleted-meanwhile")
	p.seed("placeholders", "still-there")
	p.set("placeholders", "created-meanwhile", true)
	p.seed("placeholders", "created-meanwhile")
	if got := p.some("placeholders", 5); got != "created-meanwhile, still-there" {
		t.Fatalf("placeholders after the listing: %q, want the one created and the one listed, not the one deleted", got)
	}
	p.set("placeholders", "still-there", false)
	if n := p.size("placeholders"); n != 1 {
		t.Fatalf("%d placeholders after a listed one went, want 1", n)
	}
}

func TestLiveHeapReadsAManagersPprofHandlers(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	live, err := liveHeap(context.Background(), srv.URL+"/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	if live == 0 {
		t.Fatal("live heap 0 bytes")
	}
	if _, err := liveHeap(context.Background(), srv.URL+"/nothing/"); err == nil {
		t.Fatal("no error from a URL that serves no profile")
	}
}

func TestHeapAllocWantsTheLine(t *testing.T) {
	if v, err := heapAlloc(strings.NewReader("heap profile: 1: 2 [3: 4] @ heap/1048576\n# HeapAlloc = 12345\n# Sys = 9\n")); err != nil || v != 12345 {
		t.Fatalf("got %d, %v; want 12345", v, err)
	}
	if _, err := heapAlloc(strings.NewReader("# Sys = 9\n")); err == nil {
		t.Fatal("no error without a HeapAlloc line")
	}
}
