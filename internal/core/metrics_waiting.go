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

package core

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// waitingClaims tracks the creation time of every claim not bound yet, from
// the informer's events, so that a scrape can report how long the oldest one
// has waited without listing claims.
type waitingClaims struct {
	mu      sync.Mutex
	now     func() time.Time
	created map[types.UID]time.Time
}

func (w *waitingClaims) reset(now func() time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now, w.created = now, map[types.UID]time.Time{}
}

func (w *waitingClaims) remember(uid types.UID, created time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.created[uid] = created
}

func (w *waitingClaims) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.created, uid)
}

// oldestAge is the age in seconds of the oldest claim remembered, 0 when
// there is none. It walks the waiting claims: few, unless binding is stuck.
func (w *waitingClaims) oldestAge() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.created) == 0 || w.now == nil {
		return 0
	}
	var oldest time.Time
	for _, c := range w.created {
		if oldest.IsZero() || c.Before(oldest) {
			oldest = c
		}
	}
	return max(w.now().Sub(oldest).Seconds(), 0)
}

// classSet is a set of class names safe for concurrent use.
type classSet struct{ m sync.Map }

// goneClasses are the classes deleted since the manager started.
var goneClasses = &classSet{}

func (s *classSet) add(name string)      { s.m.Store(name, struct{}{}) }
func (s *classSet) remove(name string)   { s.m.Delete(name) }
func (s *classSet) has(name string) bool { _, ok := s.m.Load(name); return ok }
