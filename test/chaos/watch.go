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
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/tombstone"
)

// eventCounter counts Events by reason over the run, creations and series
// updates alike.
type eventCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *eventCounter) add(obj any) {
	if ev, ok := tombstone.As[*eventsv1.Event](obj); ok {
		e.mu.Lock()
		e.n[ev.Reason]++
		e.mu.Unlock()
	}
}

func (e *eventCounter) counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.n)
}

// watch feeds the checker from informers on Services, IPAddresses, claims
// and usage ledgers, and counts Events; it returns once the informers
// synced.
func watch(ctx context.Context, e *env, chk *checker, events *eventCounter) error {
	c, err := cache.New(e.cluster.Config, cache.Options{
		Scheme:           newScheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{&eventsv1.Event{}: {Transform: func(obj any) (any, error) {
			if ev, ok := obj.(*eventsv1.Event); ok {
				return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ev.Namespace, Name: ev.Name,
					ResourceVersion: ev.ResourceVersion}, Reason: ev.Reason}, nil
			}
			return obj, nil
		}}},
	})
	if err != nil {
		return err
	}
	handle := func(obj client.Object, f func(obj any, gone bool)) error {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { f(o, false) },
			UpdateFunc: func(_, o any) { f(o, false) },
			DeleteFunc: func(o any) {
				o, _ = tombstone.As[any](o)
				f(o, true)
			},
		})
		return err
	}
	err = errors.Join(
		handle(&corev1.Service{}, typed(chk.onService)),
		handle(&v1alpha1.IPAddressClaim{}, typed(chk.onClaim)),
		handle(&v1alpha1.IPAddress{}, typed(chk.onAddress)),
		handle(&v1alpha1.IPAddressClassUsage{}, typed(chk.onLedger)),
		handle(&eventsv1.Event{}, func(o any, gone bool) {
			if !gone {
				events.add(o)
			}
		}),
	)
	if err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the chaos harness's watch cache did not sync")
	}
	return nil
}

// typed adapts one of the checker's handlers to an informer's objects,
// passing over any of another type.
func typed[T any](on func(obj T, gone bool)) func(obj any, gone bool) {
	return func(obj any, gone bool) {
		if o, ok := obj.(T); ok {
			on(o, gone)
		}
	}
}
