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
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	b "github.com/cozystack/address-controller/test/builder"
)

// cachedServices is the driver's cache as a pass may see it: it lists the
// Services it holds, whatever the API server holds by now.
type cachedServices struct {
	client.Client
	services []corev1.Service
}

func (c cachedServices) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*corev1.ServiceList).Items = c.services
	return nil
}

// apiServer answers a read past the cache with what it holds now.
type apiServer map[client.ObjectKey]*corev1.Service

func (s apiServer) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	svc, ok := s[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("services"), key.Name)
	}
	svc.DeepCopyInto(obj.(*corev1.Service))
	return nil
}

func (apiServer) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// TestWrongfulHoldersConfirmsWithTheAPIServer: a Service the cache shows
// holding the address without entitlement is named a thief only if the API
// server agrees. The cache of Services lags behind that of addresses: the
// pass woken by a cleared association can still see the Service before the
// mark that it is letting go.
func TestWrongfulHoldersConfirmsWithTheAPIServer(t *testing.T) {
	a := b.Address("ip-a", "10.0.0.1", "c", b.BoundTo("tenant", "web", "u1"))
	reporting := func(name string, opts ...b.ServiceOption) *corev1.Service {
		s := b.Service("tenant", name, opts...)
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.0.0.1"}}
		return s
	}
	stale := reporting("old")
	cases := []struct {
		name string
		now  *corev1.Service // nil: gone
		want []string
	}{
		{"letting go by now", reporting("old", b.WithLabel("releasing", "true")), nil},
		{"a thief still", reporting("old"), []string{"old"}},
		{"gone", nil, nil},
		{"no longer reporting it", b.Service("tenant", "old"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			api := apiServer{}
			if tc.now != nil {
				api[client.ObjectKeyFromObject(tc.now)] = tc.now
			}
			r := &AddressReconciler{base: &base{Client: cachedServices{services: []corev1.Service{*stale}}, live: api, backend: stubBackend{}}}
			got, err := r.wrongfulHolders(context.Background(), a, true)
			g.Expect(err).NotTo(HaveOccurred())
			names := make([]string, 0, len(got))
			for _, s := range got {
				names = append(names, s.Name)
			}
			g.Expect(names).To(ConsistOf(tc.want))
		})
	}
}
