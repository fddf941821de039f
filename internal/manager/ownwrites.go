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

package manager

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ownWritesKept is how long a write is worth remembering: older ones are
// dropped at the next write. The cache has caught up long before, unless
// its watch is broken.
const ownWritesKept = time.Minute

// NewClientReadingOwnWrites is a controller-runtime NewClientFunc: the
// manager's usual client (reads from the cache, writes to the API server),
// made to read its own writes.
//
// The cache learns of a write only when the watch brings it back, a few
// milliseconds to seconds later. A pass that runs in between (another
// controller of the same manager woken by the same change, or the same one
// woken by a related object) reads the version the write replaced, decides
// on it, and writes with that version's resourceVersion: the API server
// refuses it with 409 Conflict and the pass runs again. This client
// remembers, for each object it patched or updated, the resourceVersion
// the write replaced and the object the API server returned; a Get
// that the cache answers with the replaced version gets the written one
// instead. Any other version in the cache (newer, or written by someone
// else) is the cache's answer, and the memory is dropped. Only this
// process's successful writes are remembered, and a remembered object is
// one the API server stored, so a read never sees something that did not
// exist; it sees it sooner. Lists keep the cache's view: an object written
// since may no longer match the index or selector it was listed by.
func NewClientReadingOwnWrites(cfg *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return ReadOwnWrites(c), nil
}

// ReadOwnWrites wraps c as NewClientReadingOwnWrites does.
func ReadOwnWrites(c client.Client) client.Client {
	return &ownWrites{Client: c, writes: &writeMemory{scheme: c.Scheme(), byKey: map[writeKey]written{}, now: time.Now}}
}

type ownWrites struct {
	client.Client
	writes *writeMemory
}

type writeKey struct {
	gvk schema.GroupVersionKind
	key client.ObjectKey
}

// written is one remembered write: the object as the API server stored it,
// and the resourceVersions it replaced (more than one when this process
// wrote several times before the cache caught up: each version on the
// way is as stale as the first).
type written struct {
	replaced []string
	obj      client.Object
	at       time.Time
}

// chainKept bounds the versions remembered for one object.
const chainKept = 8

type writeMemory struct {
	scheme *runtime.Scheme
	now    func() time.Time

	mu    sync.Mutex
	byKey map[writeKey]written
	swept time.Time
}

func (m *writeMemory) keyOf(obj client.Object) (writeKey, bool) {
	return m.keyFor(obj, client.ObjectKeyFromObject(obj))
}

// keyFor is the memory's key for the object named key, of obj's kind.
func (m *writeMemory) keyFor(obj client.Object, key client.ObjectKey) (writeKey, bool) {
	gvk, err := apiutil.GVKForObject(obj, m.scheme)
	if err != nil {
		return writeKey{}, false
	}
	return writeKey{gvk: gvk, key: key}, true
}

// remember records that obj, read at replaced, is now what the API server
// returned for a write.
func (m *writeMemory) remember(replaced string, obj client.Object) {
	k, ok := m.keyOf(obj)
	if !ok || replaced == "" || obj.GetResourceVersion() == replaced {
		return
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	chain := []string{replaced}
	if w, ok := m.byKey[k]; ok && w.obj.GetResourceVersion() == replaced && len(w.replaced) < chainKept {
		chain = append(w.replaced, replaced)
	}
	kept := obj.DeepCopyObject().(client.Object)
	kept.SetManagedFields(nil) // as the cache keeps objects (CacheDefaults)
	m.byKey[k] = written{replaced: chain, obj: kept, at: now}
	if now.Sub(m.swept) > ownWritesKept {
		for k, w := range m.byKey {
			if now.Sub(w.at) > ownWritesKept {
				delete(m.byKey, k)
			}
		}
		m.swept = now
	}
}

// refresh replaces obj, as the cache returned it, with this process's later
// write of it, if the cache still holds the version that write replaced.
func (m *writeMemory) refresh(obj client.Object) {
	k, ok := m.keyOf(obj)
	if !ok {
		return
	}
	m.mu.Lock()
	w, found := m.byKey[k]
	if found && !slices.Contains(w.replaced, obj.GetResourceVersion()) {
		delete(m.byKey, k)
		found = false
	}
	m.mu.Unlock()
	if !found {
		return
	}
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(w.obj.DeepCopyObject())
	if dst.Type() == src.Type() {
		dst.Elem().Set(src.Elem())
	}
}

// forget drops what is remembered of the object named key, of obj's kind.
func (m *writeMemory) forget(obj client.Object, key client.ObjectKey) {
	if k, ok := m.keyFor(obj, key); ok {
		m.mu.Lock()
		delete(m.byKey, k)
		m.mu.Unlock()
	}
}

func (c *ownWrites) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	switch {
	case err == nil:
		c.writes.refresh(obj)
	case apierrors.IsNotFound(err):
		c.writes.forget(obj, key)
	}
	return err
}

func (c *ownWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	replaced := obj.GetResourceVersion()
	err := c.Client.Patch(ctx, obj, patch, opts...)
	if err == nil {
		c.writes.remember(replaced, obj)
	}
	return err
}

func (c *ownWrites) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	replaced := obj.GetResourceVersion()
	err := c.Client.Update(ctx, obj, opts...)
	if err == nil {
		c.writes.remember(replaced, obj)
	}
	return err
}

func (c *ownWrites) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.writes.forget(obj, client.ObjectKeyFromObject(obj))
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *ownWrites) Status() client.SubResourceWriter {
	return ownStatusWrites{SubResourceWriter: c.Client.Status(), writes: c.writes}
}

// ownStatusWrites remembers the writes to the status subresource.
type ownStatusWrites struct {
	client.SubResourceWriter
	writes *writeMemory
}

func (w ownStatusWrites) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	replaced := obj.GetResourceVersion()
	err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	if err == nil {
		w.writes.remember(replaced, obj)
	}
	return err
}

func (w ownStatusWrites) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	replaced := obj.GetResourceVersion()
	err := w.SubResourceWriter.Update(ctx, obj, opts...)
	if err == nil {
		w.writes.remember(replaced, obj)
	}
	return err
}
