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
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
)

func available(name, ip, class string, opts ...b.AddressOption) *v1alpha1.IPAddress {
	a := b.Address(name, ip, class, opts...)
	a.Status.Phase = v1alpha1.AddressAvailable
	return a
}

func TestAvailableSetKeepsNamesSortedPerClassAndFamily(t *testing.T) {
	g := NewWithT(t)
	s := newAvailableSet()
	none := func(string) bool { return false }
	s.observe(nil, available("c", "10.0.0.3", "public"))
	s.observe(nil, available("a", "10.0.0.1", "public"))
	s.observe(nil, available("b", "10.0.0.2", "public"))
	s.observe(nil, available("v6", "2001:db8::1", "public"))
	s.observe(nil, available("other", "10.0.0.4", "private"))
	s.observe(nil, b.Address("pending", "10.0.0.5", "public"))
	g.Expect(s.names["public/IPv4"]).To(Equal([]string{"a", "b", "c"}))
	g.Expect(s.names["public/IPv6"]).To(Equal([]string{"v6"}))

	// Concurrent workers take different addresses, smallest first.
	first, ok := s.take("public", v1alpha1.IPv4, none)
	g.Expect(ok).To(BeTrue())
	second, _ := s.take("public", v1alpha1.IPv4, none)
	g.Expect([]string{first, second}).To(Equal([]string{"a", "b"}))
	third, _ := s.take("public", v1alpha1.IPv4, func(n string) bool { return n == "c" })
	g.Expect(third).To(BeEmpty(), "c is skipped, a and b are taken")
	s.release("a")
	again, _ := s.take("public", v1alpha1.IPv4, none)
	g.Expect(again).To(Equal("a"))

	// Bound, deleted, or claimed: out.
	boundA := available("a", "10.0.0.1", "public", b.BoundTo("ns", "x", "u"))
	s.observe(available("a", "10.0.0.1", "public"), boundA)
	deleting := available("b", "10.0.0.2", "public")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	s.observe(available("b", "10.0.0.2", "public"), deleting)
	s.observe(available("c", "10.0.0.3", "public"), nil)
	g.Expect(s.names).NotTo(HaveKey("public/IPv4"), "empty keys are dropped")
}

func TestPendingBindsLastUntilTheInformerCatchesUp(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	p := newPendingBinds(func() time.Time { return now })
	a := available("a", "10.0.0.1", "public", b.BoundTo("ns", "web", "uid-1"))
	a.ResourceVersion = "100"
	p.record("uid-1", a)
	g.Expect(p.isPending("a")).To(BeTrue())
	g.Expect(p.forClaim("uid-1")).To(HaveLen(1))

	stale := a.DeepCopy()
	stale.ResourceVersion = "99"
	p.observe(stale, false)
	g.Expect(p.isPending("a")).To(BeTrue(), "an older version does not clear it")

	p.observe(a, false)
	g.Expect(p.isPending("a")).To(BeFalse())
	g.Expect(p.forClaim("uid-1")).To(BeEmpty())

	p.record("uid-1", a)
	now = now.Add(3 * time.Minute)
	g.Expect(p.forClaim("uid-1")).To(BeEmpty(), "a binding the informer never shows expires")
	g.Expect(p.isPending("a")).To(BeFalse())
}

func TestOlderVersion(t *testing.T) {
	g := NewWithT(t)
	g.Expect(olderVersion("9", "10")).To(BeTrue())
	g.Expect(olderVersion("10", "10")).To(BeFalse())
	g.Expect(olderVersion("11", "10")).To(BeFalse())
	g.Expect(olderVersion("x", "y")).To(BeTrue(), "unparsable versions only match when equal")
	g.Expect(olderVersion("x", "x")).To(BeFalse())
}

// recordingQueue notes, for every claim the handler wakes, what that claim's
// pass would take from the available set at that moment.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	set   *availableSet
	found map[string]string
}

func (q *recordingQueue) Add(req reconcile.Request) {
	name, _ := q.set.take("public", v1alpha1.IPv4, func(string) bool { return false })
	q.set.release(name)
	q.found[req.Name] = name
}

// TestAWokenClaimFindsTheAddressThatWokeIt: the handler that wakes the claims
// waiting for a class when one of its addresses becomes Available has already
// put the address into the available set. Fed from another informer handler,
// which runs on a goroutine of its own, the set could lag and the claim would
// find nothing and wait for an address that is there.
func TestAWokenClaimFindsTheAddressThatWokeIt(t *testing.T) {
	g := NewWithT(t)
	k8s := fake.NewClientBuilder().WithScheme(manager.NewScheme()).
		WithIndex(&v1alpha1.IPAddressClaim{}, indexPendingClaim, func(o client.Object) []string {
			return pendingKeys(o.(*v1alpha1.IPAddressClaim))
		}).
		WithObjects(b.Claim("ns", "web", b.OfClass("public"))).Build()
	r := &ClaimReconciler{Client: k8s, available: newAvailableSet()}
	q := &recordingQueue{set: r.available, found: map[string]string{}}
	h := r.addressEvents()
	ctx := context.Background()

	created := b.Address("a", "10.0.0.1", "public")
	h.Create(ctx, event.CreateEvent{Object: created}, q)
	g.Expect(q.found).To(BeEmpty(), "a new address wakes no waiting claim")

	h.Update(ctx, event.UpdateEvent{ObjectOld: created, ObjectNew: available("a", "10.0.0.1", "public")}, q)
	g.Expect(q.found).To(Equal(map[string]string{"web": "a"}))

	h.Delete(ctx, event.DeleteEvent{Object: available("a", "10.0.0.1", "public")}, q)
	name, ok := r.available.take("public", v1alpha1.IPv4, func(string) bool { return false })
	g.Expect(ok).To(BeFalse(), "a deleted address leaves the set, found %q", name)
}
