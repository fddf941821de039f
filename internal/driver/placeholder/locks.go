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

import "sync"

// keyLocks lets one caller at a time work on a key; a key nobody holds or
// waits for takes no memory.
type keyLocks struct {
	mu   sync.Mutex
	keys map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// lock blocks until key is free, takes it, and returns what frees it.
func (l *keyLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.keys == nil {
		l.keys = map[string]*keyLock{}
	}
	k := l.keys[key]
	if k == nil {
		k = &keyLock{}
		l.keys[key] = k
	}
	k.users++
	l.mu.Unlock()
	k.Lock()
	return func() {
		k.Unlock()
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.keys, key)
		}
		l.mu.Unlock()
	}
}
