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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestDeletionsSendEachDeleteOnce(t *testing.T) {
	var d Deletions
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if !d.Begin("a", t0) {
		t.Fatal("a first deletion must go ahead")
	}
	if d.Begin("a", t0.Add(time.Second)) {
		t.Fatal("a second deletion of the same placeholder right after the first must be skipped")
	}
	if !d.Begin("b", t0.Add(time.Second)) {
		t.Fatal("another placeholder's deletion must go ahead")
	}
	d.Forget("b")
	if !d.Begin("b", t0.Add(2*time.Second)) {
		t.Fatal("after a failed deletion, the next must go ahead")
	}
	later := t0.Add(deletionMemory + 3*time.Second)
	if !d.Begin("a", later) {
		t.Fatal("a deletion older than the memory must not block a new one")
	}
	if _, ok := d.at[types.UID("b")]; ok {
		t.Fatal("entries older than the memory must be pruned")
	}
}
