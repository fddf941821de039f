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

package stoptest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/catchup"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestNoReleaseWhileMetalLBIgnoresSingleEvents: after a start, MetalLB
// ignores the events of single Services until a full pass over all of them
// succeeds, and never hears again of a deletion it ignored. So while it
// does, the driver deletes no hold (it changes no Service at all): the
// release of a deleted claim's address waits, and goes through once MetalLB
// handles single events again, leaving nothing allocated in MetalLB's books
// for a Service that is gone.
func TestNoReleaseWhileMetalLBIgnoresSingleEvents(t *testing.T) {
	mt.StartCore(t)
	mt.StartDriverOpts(t, driver.HandoffAuto, trust, false)
	g := NewWithT(t)
	ctx := context.Background()
	ns, class, v4, addr := mt.ClaimedAndHeld(t, g, b.ClassReclaim(v1alpha1.ReclaimDelete))
	hold := mt.Placeholders(g, addr.Name)()
	g.Expect(hold).To(HaveLen(1))
	claimUID := mt.Kit.Claim(g, ns, "web").UID
	buried := tombstonesMade(t, g)
	lift := ignoringSingleEvents(t, g, ns, strings.TrimSuffix(v4, "0/28")+"14")
	time.Sleep(2 * trust) // the driver's last word from MetalLB is older than it trusts one
	pool := params.PoolName(class)

	// The claim goes; its address waits for the driver, which waits for
	// MetalLB, and says so.
	g.Expect(mt.Client.Delete(ctx, mt.Kit.Claim(g, ns, "web"))).To(Succeed())
	// A full pass answers only a question already out: the nudge waits for
	// the driver to ask, or the answer waits for MetalLB's next retry.
	g.Eventually(questionOut(g), mt.Timeout, mt.Tick).Should(BeTrue(), "the driver asks MetalLB before it releases")
	nudge := unrelatedPool(t, g) // a full pass at once, which fails again
	// Its answer, out of order, says MetalLB is not ready; on a loaded
	// machine the pass may not reach the probes before the question has
	// waited its patience, which says the same.
	g.Eventually(driverSeries(g, "metallb_iad_metallb_ready"), catchup.Patience+mt.Timeout, mt.Tick).Should(Equal(0.0))
	g.Consistently(func() []string { return mt.Placeholders(g, addr.Name)() }, 5*time.Second, mt.Tick).Should(Equal(hold),
		"the hold stays while MetalLB would not hear of its deletion")
	a := &v1alpha1.IPAddress{}
	g.Expect(mt.Client.Get(ctx, client.ObjectKey{Name: addr.Name}, a)).To(Succeed())
	g.Expect(a.DeletionTimestamp).NotTo(BeNil())
	// A claim asking meanwhile is told why it waits.
	mt.Kit.Create(g, b.Claim(ns, "later", b.OfClass(class)))
	g.Eventually(mt.Kit.EventsAbout(g, mt.Kit.Claim(g, ns, "later"), v1alpha1.EventWaitingForBackend), mt.Timeout, mt.Tick).
		Should(ContainElement(ContainSubstring("MetalLB is not handling single Service events")))
	g.Expect(mt.Client.Delete(ctx, b.Claim(ns, "later"))).To(Succeed())
	g.Eventually(mt.Kit.Gone(b.Claim(ns, "later")), mt.Timeout, mt.Tick).Should(BeTrue())

	// MetalLB's next pass succeeds; the release goes through.
	lift()
	passAgain(g, nudge)
	g.Eventually(mt.Kit.Gone(&v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: addr.Name}}), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, hold[0])), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Expect(driverSeries(g, "metallb_iad_metallb_ready")()).To(Equal(1.0))
	g.Eventually(metallbSeries(g, "metallb_allocator_addresses_in_use_total", "pool", pool), mt.Timeout, mt.Tick).Should(Equal(1.0),
		"only the poison: MetalLB let the hold's address go")

	// A Service pinned to the address by hand gets it at once: no phantom
	// is in the way, and no tombstone was needed.
	mt.Kit.Create(g, b.Service(ns, "after", b.PinnedByHand(addr.Address), b.Port(80)))
	g.Eventually(mt.IngressOf(g, ns, "after"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
	g.Expect(mt.ServiceEvents(g, ns, "after")).NotTo(ContainElement(ContainSubstring("address also in use")))
	// Other tests' leftovers may cost tombstones of their own in this
	// process; none was made for this claim's hold or request.
	g.Expect(buried()).NotTo(ContainElement(BeElementOf(hold[0], "hold-"+addr.Name, "alloc-"+string(claimUID)+"-v4")))
}

// questionOut tells whether every probe of one of the driver's sets carries
// a question MetalLB has not answered yet.
func questionOut(g Gomega) func() bool {
	return func() bool {
		list := &corev1.ServiceList{}
		g.Expect(mt.Client.List(context.Background(), list, client.InNamespace(mt.PlaceholderNS))).To(Succeed())
		asked := map[string]int{}
		for _, svc := range list.Items {
			set, ok := strings.CutPrefix(svc.Name, "metallb-iad-probe-")
			if ok && len(set) == 2 && svc.Annotations["metallb.io/ip-allocated-from-pool"] != "" {
				asked[set[:1]]++
			}
		}
		return asked["a"] == 5 || asked["b"] == 5
	}
}

// tombstonesMade watches the placeholder namespace until t ends, and returns
// the names of the tombstones created meanwhile.
func tombstonesMade(t *testing.T, g Gomega) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(mt.Cluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(t.Context(), &corev1.ServiceList{}, client.InNamespace(mt.PlaceholderNS),
		client.MatchingLabels{v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderTombstone})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var names []string
	go func() {
		for ev := range w.ResultChan() {
			if svc, ok := ev.Object.(*corev1.Service); ok && ev.Type == watch.Added {
				mu.Lock()
				names = append(names, svc.Name)
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
}

// trust is how long this file's drivers trust an answer from MetalLB's
// single events: short, so that the driver asks again after MetalLB
// restarts.
const trust = time.Second

// driverSeries reads an unlabelled series of the driver's metrics (the
// driver runs in this process).
func driverSeries(g Gomega, name string) func() float64 {
	return func() float64 {
		for _, m := range testkit.Series(g, name) {
			return m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		return -1
	}
}
