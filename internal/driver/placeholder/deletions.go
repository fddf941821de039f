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

package placeholder

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// deletionMemory is how long a deletion is remembered: long enough for the
// cache to show it, short enough that the memory stays small. Deleting again
// after that is harmless, only a wasted request.
const deletionMemory = 30 * time.Second

// Deletions remembers the objects this process deleted lately. A pass that
// runs again before the cache shows its own deletion (a hold the carrier's
// pass let go, woken again by the carrier's next write) would otherwise
// delete it again. The zero value is ready to use.
type Deletions struct {
	mu     sync.Mutex
	at     map[types.UID]time.Time
	pruned time.Time
}

// Begin records that uid is being deleted now; false when it already was,
// lately.
func (d *Deletions) Begin(uid types.UID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.pruned) > deletionMemory {
		maps.DeleteFunc(d.at, func(_ types.UID, at time.Time) bool { return now.Sub(at) > deletionMemory })
		d.pruned = now
	}
	if at, ok := d.at[uid]; ok && now.Sub(at) <= deletionMemory {
		return false
	}
	if d.at == nil {
		d.at = map[types.UID]time.Time{}
	}
	d.at[uid] = now
	return true
}

// Recent reports whether this process deleted uid lately.
func (d *Deletions) Recent(uid types.UID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[uid]
	return ok && now.Sub(at) <= deletionMemory
}

// Forget drops uid after a deletion that failed, so that the next pass tries
// again.
func (d *Deletions) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, uid)
}
