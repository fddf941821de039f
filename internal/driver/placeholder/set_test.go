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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// A claim's change wakes its allocation placeholders only: its hold, which
// carries the claim's UID too, is the address's, and the claim index leaves
// it out (a cluster has one hold per address, and the index would double
// the memory they cost).
func TestAClaimMapsToItsAllocationsNotItsHold(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	live, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "claim-index-"}}
	g.Expect(live.Create(ctx, ns)).To(Succeed())

	c, err := cache.New(testCluster.Config, cache.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	cached, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme(), Cache: &client.CacheOptions{Reader: c}})
	g.Expect(err).NotTo(HaveOccurred())
	s := &placeholder.Set{Client: cached, Namespace: ns.Name, Labels: map[string]string{"test": "claim-index"}}
	g.Expect(s.Indexes(ctx, c)).To(Succeed())
	go func() { _ = c.Start(ctx) }()
	g.Expect(c.WaitForCacheSync(ctx)).To(BeTrue())

	claim := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "web", UID: "5e1f0c2a-claim"}}
	alloc := s.NewAllocation(claim, "public", v1alpha1.IPv4)
	hold := s.NewAllocation(claim, "public", v1alpha1.IPv6)
	placeholder.MarkHold(hold, &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "ip-2001-db8--1", UID: "a1"}})
	hold.OwnerReferences = nil // no garbage collector here, but no dangling owner either
	for _, ph := range []*corev1.Service{alloc, hold} {
		g.Expect(live.Create(ctx, ph)).To(Succeed())
	}
	for _, ph := range []*corev1.Service{alloc, hold} {
		g.Eventually(func() error {
			return c.Get(ctx, client.ObjectKeyFromObject(ph), &corev1.Service{})
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	}

	g.Expect(s.AllocationsOfClaim(ctx, claim)).To(ConsistOf(
		reconcile.Request{NamespacedName: client.ObjectKeyFromObject(alloc)}))
}
