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

	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/address-controller/internal/tombstone"
)

// Events are typed handlers of the informer events of one kind; a nil one
// is not called.
type Events[T client.Object] struct {
	Add    func(obj T)
	Update func(old, new T)
	// Delete gets the object's last known state, a tombstone unwrapped; an
	// event that holds no object of the kind is dropped.
	Delete func(obj T)
}

// Observe registers e on the informer of e's kind in mgr's cache.
func Observe[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, mgr ctrl.Manager, e Events[PT]) error {
	return ObserveKind(ctx, mgr, PT(new(T)), e)
}

// ObserveKind registers e on the informer of kind's kind in mgr's cache:
// Observe for a kind with no Go type of its own, an unstructured object
// with its GroupVersionKind set.
func ObserveKind[T client.Object](ctx context.Context, mgr ctrl.Manager, kind T, e Events[T]) error {
	inf, err := mgr.GetCache().GetInformer(ctx, kind)
	if err != nil {
		return err
	}
	var h toolscache.ResourceEventHandlerFuncs
	if e.Add != nil {
		h.AddFunc = func(obj any) { e.Add(obj.(T)) }
	}
	if e.Update != nil {
		h.UpdateFunc = func(old, new any) { e.Update(old.(T), new.(T)) }
	}
	if e.Delete != nil {
		h.DeleteFunc = func(obj any) {
			if o, ok := tombstone.As[T](obj); ok {
				e.Delete(o)
			}
		}
	}
	_, err = inf.AddEventHandler(h)
	return err
}

// Changes are Events that call change with an object's state before and
// after each event: old is nil on a creation, new is nil on a deletion.
func Changes[T client.Object](change func(old, new T)) Events[T] {
	var none T
	return Events[T]{
		Add:    func(obj T) { change(none, obj) },
		Update: change,
		Delete: func(obj T) { change(obj, none) },
	}
}

// States are Events that call state with an object's latest state, and
// whether it is gone.
func States[T client.Object](state func(obj T, deleted bool)) Events[T] {
	return Events[T]{
		Add:    func(obj T) { state(obj, false) },
		Update: func(_, new T) { state(new, false) },
		Delete: func(obj T) { state(obj, true) },
	}
}
