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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// RequestsByIndex lists, from the cache, the objects of list's kind whose
// index field holds key (opts narrow it further, e.g. to a namespace), and
// returns a request for each: what an event handler wakes. A failed lookup
// wakes nothing and is logged; the cache does not fail on a registered index.
func RequestsByIndex(ctx context.Context, c client.Reader, list client.ObjectList, index, key string, opts ...client.ListOption) []reconcile.Request {
	opts = append(opts, client.MatchingFields{index: key}, client.UnsafeDisableDeepCopy)
	if err := c.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "Looking up the objects to wake", "index", index, "key", key)
		return nil
	}
	reqs := make([]reconcile.Request, 0, meta.LenList(list))
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
	return reqs
}

// CreateOrDelete passes creations and deletions, not updates.
func CreateOrDelete() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
}

// DeleteOnly passes deletions only.
func DeleteOnly() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
