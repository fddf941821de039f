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
	"slices"
	"sync"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// availableSet mirrors, from the IPAddress informer, the names of the
// Available addresses of each class and family in sorted order. Matching takes
// the smallest name from it without listing, so its cost does not grow with
// the number of addresses. It is a hint: the claim reconciler re-checks every
// candidate and binds with optimistic concurrency.
type availableSet struct {
	mu    sync.Mutex
	names map[string][]string // class/family → sorted names
	// taken are the names a worker of this process is binding right now:
	// concurrent workers then try different addresses instead of racing
	// for the smallest one and losing on a conflict.
	taken map[string]bool
}

func newAvailableSet() *availableSet {
	return &availableSet{names: map[string][]string{}, taken: map[string]bool{}}
}

func availableKey(class string, family v1alpha1.IPFamily) string {
	return class + "/" + string(family)
}

// isAvailable is the membership rule: the core made it Available and nothing
// has claimed or deleted it since.
func isAvailable(a *v1alpha1.IPAddress) bool {
	return a != nil && a.Status.Phase == v1alpha1.AddressAvailable && a.Spec.ClaimRef == nil &&
		a.DeletionTimestamp == nil && a.Family() != ""
}

// observe applies one informer event: old is nil on add, new is nil on delete.
func (s *availableSet) observe(old, new *v1alpha1.IPAddress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if isAvailable(old) {
		s.remove(availableKey(old.Spec.ClassName, old.Family()), old.Name)
	}
	if isAvailable(new) {
		s.insert(availableKey(new.Spec.ClassName, new.Family()), new.Name)
	}
}

func (s *availableSet) insert(key, name string) {
	names := s.names[key]
	i, found := slices.BinarySearch(names, name)
	if !found {
		s.names[key] = slices.Insert(names, i, name)
	}
}

func (s *availableSet) remove(key, name string) {
	names := s.names[key]
	if i, found := slices.BinarySearch(names, name); found {
		s.names[key] = slices.Delete(names, i, i+1)
	}
	if len(s.names[key]) == 0 {
		delete(s.names, key)
	}
}

// take returns the smallest name of an Available address of the class and
// family that no other worker is binding and skip does not reject, and marks
// it taken until release.
func (s *availableSet) take(class string, family v1alpha1.IPFamily, skip func(string) bool) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.names[availableKey(class, family)] {
		if !s.taken[name] && !skip(name) {
			s.taken[name] = true
			return name, true
		}
	}
	return "", false
}

// release ends a worker's attempt at binding name.
func (s *availableSet) release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.taken, name)
}
