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

package placeholder_test

import (
	"context"
	"net/netip"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	cluster.RunTests(m, cluster.Options{WithoutControllerManager: true, WithoutMetalLB: true}, &testCluster)
}

// staleServices stands in for an informer cache whose watch has not brought
// the latest writes yet: it answers with the Services it was given, listed
// by the placeholder address index.
type staleServices struct {
	held map[client.ObjectKey]*corev1.Service
}

func (s staleServices) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	svc, ok := s.held[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("services"), key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(svc.DeepCopy()).Elem())
	return nil
}

func (s staleServices) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	key, _ := lo.FieldSelector.RequiresExactMatch(placeholder.IndexByAddress)
	l := list.(*corev1.ServiceList)
	l.Items = nil
	for _, svc := range s.held {
		if svc.Namespace == lo.Namespace && svc.Labels[v1alpha1.LabelAddress] == key {
			l.Items = append(l.Items, *svc.DeepCopy())
		}
	}
	return nil
}

// countedPatches counts the patches sent to the API server.
type countedPatches struct {
	client.Client
	n atomic.Int32
}

func (c *countedPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.n.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// The claim's pass and the address's pass often hold the same address at
// once, and again before the cache has the first one's write: the adopted
// placeholder is patched once, not once per pass.
func TestHoldPatchesAnAdoptedPlaceholderOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hold-once"}}
	direct, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(direct.Create(ctx, ns)).To(Succeed())

	a := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "ip-192-0-2-7", UID: "0b7c9c2e-hold-once"},
		Spec: v1alpha1.IPAddressSpec{Address: "192.0.2.7"}}
	ip := netip.MustParseAddr(a.Spec.Address)
	cache := staleServices{held: map[client.ObjectKey]*corev1.Service{}}
	plain, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme(),
		Cache: &client.CacheOptions{Reader: cache}})
	g.Expect(err).NotTo(HaveOccurred())
	counted := &countedPatches{Client: plain}
	set := &placeholder.Set{Client: manager.ReadOwnWrites(counted), Namespace: ns.Name, Pin: "example.com/pin", Allocator: "the allocator"}

	// An allocation placeholder the allocator gave the address to, pinned
	// to it and naming the IPAddress to come, as Record leaves it.
	ph := set.New("alloc-hold-once", "public", v1alpha1.IPv4)
	ph.Labels[v1alpha1.LabelPlaceholder] = v1alpha1.PlaceholderAllocation
	ph.Labels[v1alpha1.LabelAddress] = placeholder.AddressKey(a.Name)
	ph.Annotations[set.Pin] = ip.String()
	g.Expect(direct.Create(ctx, ph)).To(Succeed())
	cache.held[client.ObjectKeyFromObject(ph)] = ph.DeepCopy()

	mark := func(ph *corev1.Service, _ bool) { ph.Annotations["example.com/sharing"] = "key-1" }
	var wg sync.WaitGroup
	held := make([]*corev1.Service, 4)
	errs := make([]error, 4)
	for i := range held {
		wg.Go(func() { held[i], errs[i] = set.Hold(ctx, a, ip, "public", mark) })
	}
	wg.Wait()
	g.Expect(errs).To(HaveEach(Not(HaveOccurred())))
	g.Expect(held).To(HaveEach(Not(BeNil())))
	last, err := set.Hold(ctx, a, ip, "public", mark)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(last.Name).To(Equal(ph.Name))

	g.Expect(counted.n.Load()).To(BeEquivalentTo(1), "five passes over a cache that never caught up send one patch")
	stored := &corev1.Service{}
	g.Expect(direct.Get(ctx, client.ObjectKeyFromObject(ph), stored)).To(Succeed())
	g.Expect(stored.Labels).To(HaveKeyWithValue(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold))
	g.Expect(stored.Annotations).To(HaveKeyWithValue("example.com/sharing", "key-1"))
	g.Expect(stored.OwnerReferences).To(ConsistOf(HaveField("UID", a.UID)))
}
