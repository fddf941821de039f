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

package manager_test

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	cluster.RunTests(m, cluster.Options{WithoutControllerManager: true, WithoutMetalLB: true}, &testCluster)
}

// frozenCache stands in for an informer cache whose watch has not brought
// the latest writes yet: it answers with the IPAddresses it was last given.
type frozenCache struct {
	held map[string]*v1alpha1.IPAddress
}

func (f *frozenCache) hold(a *v1alpha1.IPAddress) { f.held[a.Name] = a.DeepCopy() }

func (f *frozenCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	a, ok := f.held[key.Name]
	if !ok {
		return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("ipaddresses").GroupResource(), key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(a.DeepCopy()).Elem())
	return nil
}

func (f *frozenCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l := list.(*v1alpha1.IPAddressList)
	l.Items = nil
	for _, a := range f.held {
		l.Items = append(l.Items, *a.DeepCopy())
	}
	return nil
}

// clients returns a plain client and one that reads its own writes, both
// reading from cache and writing to the API server.
func clients(g Gomega, cache client.Reader) (plain, own client.Client) {
	plain, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme(),
		Cache: &client.CacheOptions{Reader: cache}})
	g.Expect(err).NotTo(HaveOccurred())
	return plain, manager.ReadOwnWrites(plain)
}

func setPhase(phase v1alpha1.IPAddressPhase) func(*v1alpha1.IPAddress) {
	return func(a *v1alpha1.IPAddress) { a.Status.Phase = phase }
}

func address(g Gomega, ip string) *v1alpha1.IPAddress {
	a := b.Address(ipaddr.ObjectName(netip.MustParseAddr(ip)), ip, "own-writes")
	w, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.Create(context.Background(), a)).To(Succeed())
	return a
}

// A pass reading right after its own write, before the cache has it, sees
// the write and writes on top of it; the plain client reads the replaced
// version and is refused with 409.
func TestReadOwnWritesBeforeTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cache := &frozenCache{held: map[string]*v1alpha1.IPAddress{}}
	plain, own := clients(g, cache)
	a := address(g, "192.0.2.10")
	cache.hold(a)

	read := &v1alpha1.IPAddress{}
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), read)).To(Succeed())
	g.Expect(manager.PatchStatus(ctx, own, read, setPhase(v1alpha1.AddressAvailable))).To(BeTrue())
	written := read.ResourceVersion

	stale := &v1alpha1.IPAddress{}
	g.Expect(plain.Get(ctx, client.ObjectKeyFromObject(a), stale)).To(Succeed())
	g.Expect(stale.ResourceVersion).To(Equal(a.ResourceVersion))
	_, err := manager.PatchStatus(ctx, plain, stale, setPhase(v1alpha1.AddressBound))
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "the plain client writes on the replaced version: %v", err)

	fresh := &v1alpha1.IPAddress{}
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), fresh)).To(Succeed())
	g.Expect(fresh.ResourceVersion).To(Equal(written))
	g.Expect(fresh.Status.Phase).To(Equal(v1alpha1.AddressAvailable))
	g.Expect(manager.PatchStatus(ctx, own, fresh, setPhase(v1alpha1.AddressBound))).To(BeTrue())

	// Two writes before the cache caught up: the second is what is read.
	again := &v1alpha1.IPAddress{}
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), again)).To(Succeed())
	g.Expect(again.ResourceVersion).To(Equal(fresh.ResourceVersion))
	g.Expect(again.Status.Phase).To(Equal(v1alpha1.AddressBound))

	// Lists keep the cache's view (an object written since may no longer
	// match what it was listed by).
	list := &v1alpha1.IPAddressList{}
	g.Expect(own.List(ctx, list)).To(Succeed())
	g.Expect(list.Items).To(ConsistOf(HaveField("ObjectMeta.ResourceVersion", a.ResourceVersion)))
}

// Once the cache holds any other version, the cache answers: a version
// written by someone else is never hidden behind this process's older one.
func TestReadOwnWritesYieldsToTheCache(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cache := &frozenCache{held: map[string]*v1alpha1.IPAddress{}}
	_, own := clients(g, cache)
	a := address(g, "192.0.2.11")
	cache.hold(a)

	read := &v1alpha1.IPAddress{}
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), read)).To(Succeed())
	g.Expect(manager.PatchStatus(ctx, own, read, setPhase(v1alpha1.AddressAvailable))).To(BeTrue())

	other, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manager.PatchStatus(ctx, other, read.DeepCopy(), setPhase(v1alpha1.AddressConflict))).To(BeTrue())
	latest := &v1alpha1.IPAddress{}
	g.Expect(other.Get(ctx, client.ObjectKeyFromObject(a), latest)).To(Succeed())
	cache.hold(latest)

	got := &v1alpha1.IPAddress{}
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), got)).To(Succeed())
	g.Expect(got.Status.Phase).To(Equal(v1alpha1.AddressConflict))
	g.Expect(got.ResourceVersion).To(Equal(latest.ResourceVersion))

	// Forgotten: the cache going back to the first version (it cannot,
	// but a test can) is no longer covered by the write.
	cache.hold(a)
	g.Expect(own.Get(ctx, client.ObjectKeyFromObject(a), got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(a.ResourceVersion))

	delete(cache.held, a.Name)
	g.Expect(apierrors.IsNotFound(own.Get(ctx, client.ObjectKeyFromObject(a), got))).To(BeTrue())
}
