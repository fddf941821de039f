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

package drivertest

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
)

// countsWritePeriod is the least time between two writes of a class's
// counts while addresses keep coming: the driver batches the events of a
// burst instead of writing once per address.
const countsWritePeriod = time.Second

// classCounts is a class's status.capacity, used and available, each
// shown as "total ipv4 ipv6" ("-" for an absent family).
type classCounts struct{ Capacity, Used, Available string }

// allOf16And16 is the counts of a /28 and a /124 together: 16 addresses
// of each family.
const allOf16And16 = "32 16 16"

// capacityAndUse: the driver reports on its class what the class's ranges
// offer, how many IPAddresses it has and how many addresses are left, per
// family; claims coming and going move the counts, and a burst of claims
// costs at most one write of them per countsWritePeriod.
func capacityAndUse(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimDelete, v4, v6)
	counts := s.countsOf(g, class)
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{allOf16And16, "0 0 0", allOf16And16}),
		"a /28 and a /124 offer 16 addresses each, none used")

	writes := s.countWrites(t, g, class)
	start := time.Now()
	claims := make([]client.Object, 0, 8)
	for i := range 6 {
		claims = append(claims, b.Claim(ns, fmt.Sprintf("v4-%d", i), b.OfClass(class), b.Family(v1alpha1.IPv4)))
	}
	for i := range 2 {
		claims = append(claims, b.Claim(ns, fmt.Sprintf("dual-%d", i), b.OfClass(class), b.Family(v1alpha1.Dual)))
	}
	s.kit.CreateConcurrently(g, claims...)
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{allOf16And16, "10 8 2", "22 8 14"}),
		"eight IPv4 addresses and two IPv6 ones")
	elapsed := time.Since(start)
	t.Logf("%d writes of the counts in %v", writes.Load(), elapsed)
	g.Expect(writes.Load()).To(BeNumerically("<=", int64(elapsed/countsWritePeriod)+1),
		"at most one write of the counts per %v while the claims came (%v)", countsWritePeriod, elapsed)
	for _, c := range claims {
		s.bound(g, ns, c.GetName())
	}

	for i := range 2 {
		g.Expect(s.c.Delete(context.Background(), b.Claim(ns, fmt.Sprintf("dual-%d", i)))).To(Succeed())
	}
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{allOf16And16, "6 6 0", "26 10 16"}),
		"the Dual claims' addresses went with them")
	for i := range 6 {
		g.Expect(s.c.Delete(context.Background(), b.Claim(ns, fmt.Sprintf("v4-%d", i)))).To(Succeed())
	}
	g.Eventually(counts, timeout, tick).Should(Equal(classCounts{allOf16And16, "0 0 0", allOf16And16}),
		"every address went back")
}

// countsOf reads a class's counts.
func (s *suite) countsOf(g *WithT, class string) func() classCounts {
	return func() classCounts {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(s.c.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		return classCounts{showCounts(c.Status.Capacity), showCounts(c.Status.Used), showCounts(c.Status.Available)}
	}
}

func showCounts(c *v1alpha1.AddressCounts) string {
	if c == nil {
		return "none"
	}
	part := func(n *int64) string {
		if n == nil {
			return "-"
		}
		return strconv.FormatInt(*n, 10)
	}
	return fmt.Sprintf("%d %s %s", c.Total, part(c.IPv4), part(c.IPv6))
}

// countWrites counts, until t ends, the writes to class that change its
// status.used.
func (s *suite) countWrites(t *testing.T, g *WithT, class string) *atomic.Int64 {
	wc, err := client.NewWithWatch(s.cfg, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	c := &v1alpha1.IPAddressClass{}
	g.Expect(s.c.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
	w, err := wc.Watch(context.Background(), &v1alpha1.IPAddressClassList{},
		client.MatchingFields{"metadata.name": class}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: c.ResourceVersion}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	var n atomic.Int64
	go func() {
		last := c.Status.Used
		for e := range w.ResultChan() {
			if e.Type != watch.Modified {
				continue
			}
			now := e.Object.(*v1alpha1.IPAddressClass).Status.Used
			if !equality.Semantic.DeepEqual(last, now) {
				n.Add(1)
			}
			last = now
		}
	}()
	return &n
}
