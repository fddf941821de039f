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

package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// refusalRepeat is how long a refusal already reported on a Service goes
// unreported when the same request is refused again for the same reason:
// long enough to keep a Service that many passes look at (a claim being
// deleted wakes it at every step) from a Warning per pass, short enough
// that a refusal that lasts is reported again well within an Event's
// lifetime (one hour by default).
const refusalRepeat = 10 * time.Minute

// refusals remembers the last refusal reported on each Service. The Event
// API folds repeats of one event into a series, but every repeat still
// costs a write.
type refusals struct {
	mu   sync.Mutex
	last map[types.NamespacedName]refusal
}

type refusal struct {
	uid     types.UID
	message string
	at      time.Time
}

// report says whether a refusal of the Service key (uid) with message must
// be reported at now, and remembers it if so.
func (r *refusals) report(key types.NamespacedName, uid types.UID, message string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, ok := r.last[key]; ok && last.uid == uid && last.message == message && now.Sub(last.at) < refusalRepeat {
		return false
	}
	if r.last == nil {
		r.last = map[types.NamespacedName]refusal{}
	}
	r.last[key] = refusal{uid: uid, message: message, at: now}
	return true
}

// forget drops what is remembered of the Service key: its request was
// honoured, withdrawn, or the Service is gone.
func (r *refusals) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
}
