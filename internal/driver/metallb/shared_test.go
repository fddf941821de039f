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

package metallb_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// ipWatcher follows every Service of the cluster through a watch and
// records, for a set of IPs, every window in which no Service's load
// balancer reported one of them, once some Service had.
type ipWatcher struct {
	mu         sync.Mutex
	reporters  map[string]map[string]bool // ip -> Services reporting it
	seen       map[string]bool
	emptySince map[string]time.Time
	gaps       map[string][]time.Duration
	events     int
	// took counts, per Service, how often it began reporting a watched IP.
	took map[string]int
}

func watchIPs(t *testing.T, g Gomega, ips ...string) *ipWatcher {
	wc, err := client.NewWithWatch(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &corev1.ServiceList{})
	g.Expect(err).NotTo(HaveOccurred())
	iw := &ipWatcher{reporters: map[string]map[string]bool{}, seen: map[string]bool{},
		emptySince: map[string]time.Time{}, gaps: map[string][]time.Duration{}, took: map[string]int{}}
	for _, ip := range ips {
		iw.reporters[ip] = map[string]bool{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			svc, ok := ev.Object.(*corev1.Service)
			if !ok {
				continue
			}
			iw.observe(ev.Type, svc, time.Now())
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return iw
}

func (w *ipWatcher) observe(typ watch.EventType, svc *corev1.Service, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if os.Getenv("WATCH_DEBUG") != "" {
		fmt.Println(now.Format("15:04:05.000"), typ, svc.Namespace+"/"+svc.Name, ingressIPsOf(svc), svc.Annotations, svc.Labels, svc.DeletionTimestamp != nil)
	}
	key := svc.Namespace + "/" + svc.Name
	have := ingressIPsOf(svc)
	for ip, reps := range w.reporters {
		if typ != watch.Deleted && slices.Contains(have, ip) {
			if !reps[key] {
				w.took[key]++
			}
			reps[key] = true
		} else {
			delete(reps, key)
		}
		switch {
		case len(reps) > 0:
			w.seen[ip] = true
			if since, ok := w.emptySince[ip]; ok {
				w.gaps[ip] = append(w.gaps[ip], now.Sub(since))
				delete(w.emptySince, ip)
			}
		case w.seen[ip]:
			if _, ok := w.emptySince[ip]; !ok {
				w.emptySince[ip] = now
			}
		}
	}
}

// Took says how often the Service ns/name began reporting a watched IP.
func (w *ipWatcher) Took(ns, name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.took[ns+"/"+name]
}

// Gaps returns, per IP, the windows in which nobody reported it, an open one
// included.
func (w *ipWatcher) Gaps() map[string][]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]time.Duration{}
	for ip, gaps := range w.gaps {
		out[ip] = slices.Clone(gaps)
	}
	for ip, since := range w.emptySince {
		out[ip] = append(out[ip], time.Since(since))
	}
	return out
}

func ingressIPsOf(svc *corev1.Service) []string {
	out := make([]string, 0, len(svc.Status.LoadBalancer.Ingress))
	for _, in := range svc.Status.LoadBalancer.Ingress {
		out = append(out, in.IP)
	}
	return out
}

// TestSharedHandoffNeverFreesTheAddress walks a claim's addresses through
// association, dissociation, re-association and the carrier's deletion, for
// an IPv4, an IPv6 and a dual-stack claim, and proves from a watch on every
// Service that some Service (hold or workload) reported each address at
// every observed moment.
func TestSharedHandoffNeverFreesTheAddress(t *testing.T) {
	startBoth(t)
	for _, tc := range []struct {
		name   string
		family v1alpha1.IPFamily
		shape  []b.ServiceOption
	}{
		{"IPv4", v1alpha1.IPv4, nil},
		{"IPv6", v1alpha1.IPv6, []b.ServiceOption{b.IPv6Only()}},
		{"dual-stack", v1alpha1.Dual, []b.ServiceOption{b.DualStack()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := kit.Namespace(t)
			class, _, _ := metallbClass(t, g, tc.family != v1alpha1.IPv4)
			kit.Create(g, b.Claim(ns, "web", b.OfClass(class), b.Family(tc.family)))
			g.Eventually(kit.StateOfClaim(g, ns, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
			addrs := kit.Claim(g, ns, "web").Status.Addresses
			ips := make([]string, 0, len(addrs))
			var want []string
			for _, a := range addrs {
				ips = append(ips, a.Address)
				heldByPlaceholder(g, a.Address)
			}
			want = ips
			watcher := watchIPs(t, g, ips...)

			carriedShared := func(svc string) {
				g.Eventually(ingressOf(g, ns, svc), timeout, tick).Should(ConsistOf(want))
				for _, a := range addrs {
					g.Eventually(kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
					g.Eventually(placeholders(g, a.Name), timeout, tick).Should(BeEmpty(), "the hold goes once the Service has the address")
				}
			}
			heldAgain := func() {
				for _, a := range addrs {
					heldByPlaceholder(g, a.Address)
					g.Eventually(kit.AddressReason(g, a.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonNotAssociated))
				}
			}

			svc := b.Service(ns, "a", append([]b.ServiceOption{b.ForClaim("web")}, tc.shape...)...)
			kit.Create(g, svc)
			carriedShared("a")
			g.Expect(kit.Service(g, ns, "a").Finalizers).To(ContainElement(v1alpha1.DriverCarrierFinalizer(provisioner)))

			removeAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
			heldAgain()
			s := kit.Service(g, ns, "a")
			g.Expect(s.Annotations).NotTo(HaveKey("metallb.io/allow-shared-ip"), "the driver's key goes with its pin")
			g.Expect(s.Finalizers).NotTo(ContainElement(v1alpha1.DriverCarrierFinalizer(provisioner)))

			kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
			carriedShared("a")

			// Deleting the carrier: the hold is back before the Service goes.
			g.Expect(k8s.Delete(context.Background(), kit.Service(g, ns, "a"))).To(Succeed())
			g.Eventually(kit.Gone(b.Service(ns, "a")), timeout, tick).Should(BeTrue())
			heldAgain()

			// A second Service, then the claim goes: up to then nothing was free.
			kit.Create(g, b.Service(ns, "b", append([]b.ServiceOption{b.ForClaim("web")}, tc.shape...)...))
			carriedShared("b")
			for ip, gaps := range watcher.Gaps() {
				g.Expect(gaps).To(BeEmpty(), "%s went unreported during a shared handoff", ip)
			}
			g.Expect(k8s.Delete(context.Background(), kit.Claim(g, ns, "web"))).To(Succeed())
			g.Eventually(kit.Gone(kit.Claim(g, ns, "web")), timeout, tick).Should(BeTrue())
		})
	}
}

// TestGapHandoffWhereMetalLBCannotShare: a Service with traffic policy Local
// and a selector, and one using the hold's port, take their address by the
// gap handoff, and the address says why.
func TestGapHandoffWhereMetalLBCannotShare(t *testing.T) {
	startBoth(t)
	for _, tc := range []struct {
		name, says string
		shape      b.ServiceOption
	}{
		{"traffic policy Local", "LocalTrafficPolicy", b.LocalTraffic()},
		{"the hold's port", "PortCollision", b.Port(9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns, _, _, addr := claimedAndHeld(t, g)
			watcher := watchIPs(t, g, addr.Address)
			kit.Create(g, b.Service(ns, "a", b.ForClaim("web"), tc.shape))
			g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
			g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonGapHandoff))
			cond := testkit.Condition(kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionAssociated)
			g.Expect(cond.Message).To(ContainSubstring(tc.says))
			g.Expect(kit.Service(g, ns, "a").Annotations).NotTo(HaveKey("metallb.io/allow-shared-ip"))

			removeAnnotation(g, kit.Service(g, ns, "a"), v1alpha1.AnnotationIPAddressClaim)
			heldByPlaceholder(g, addr.Address)
			gaps := watcher.Gaps()[addr.Address]
			g.Expect(gaps).To(HaveLen(2), "one window on the way in, one on the way out")
			t.Logf("gap handoff windows for %s: %v", addr.Address, gaps)
		})
	}
}

// TestForcedGapHandoff: with --handoff=gap a Service MetalLB could share
// with still takes the gap handoff, and says so.
func TestForcedGapHandoff(t *testing.T) {
	startCore(t)
	startDriverWith(t, driver.HandoffGap)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
	g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonGapHandoff))
	g.Expect(testkit.Condition(kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionAssociated).Message).
		To(ContainSubstring(driver.ReasonGapForced))
	g.Expect(kit.Service(g, ns, "a").Finalizers).To(BeEmpty())
}

// TestUpgradeToTheSharedHandoff: a Service carried by a gap pin of an
// earlier version (no key, no finalizer) gets the key and the finalizer
// without ever losing its address, and no hold is made meanwhile.
func TestUpgradeToTheSharedHandoff(t *testing.T) {
	startCore(t)
	old := startDriverWith(t, driver.HandoffGap)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(ingressOf(g, ns, "a"), timeout, tick).Should(Equal([]string{addr.Address}))
	g.Eventually(placeholders(g, addr.Name), timeout, tick).Should(BeEmpty())
	old.Stop()

	watcher := watchIPs(t, g, addr.Address)
	startDriver(t)
	g.Eventually(func() map[string]string { return kit.Service(g, ns, "a").Annotations }, timeout, tick).Should(
		HaveKey("metallb.io/allow-shared-ip"))
	g.Eventually(func() []string { return kit.Service(g, ns, "a").Finalizers }, timeout, tick).Should(
		ContainElement(v1alpha1.DriverCarrierFinalizer(provisioner)))
	g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	g.Consistently(ingressOf(g, ns, "a"), 2*time.Second, tick).Should(Equal([]string{addr.Address}))
	g.Expect(placeholders(g, addr.Name)()).To(BeEmpty())
	g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty())
}

// TestACarrierDeletedWhileTheDriverIsDown: the carrier finalizer keeps a
// Service Terminating while the driver is down; the operating manual's
// procedure lets it go, and the driver, back, holds the address again.
func TestACarrierDeletedWhileTheDriverIsDown(t *testing.T) {
	startCore(t)
	drv := startDriver(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	drv.Stop()

	g.Expect(k8s.Delete(context.Background(), kit.Service(g, ns, "a"))).To(Succeed())
	g.Consistently(func() bool { return kit.Service(g, ns, "a").DeletionTimestamp != nil }, time.Second, tick).Should(BeTrue(),
		"the Service waits for the driver")

	cmd := exec.Command("bash", "-euo", "pipefail", "-c", testkit.CarrierFinalizerScript)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+testCluster.Kubeconfig,
		"PATH="+filepath.Dir(testCluster.Assets.Kubectl())+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Eventually(kit.Gone(b.Service(ns, "a")), timeout, tick).Should(BeTrue())

	startDriver(t)
	heldByPlaceholder(g, addr.Address)
	g.Eventually(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonNotAssociated))
}

// contend keeps asking MetalLB for ip with a Service pinned to it by hand
// (an admin's, which no admission policy stops): it rewrites an annotation
// of the Service every period, each write making MetalLB process it again,
// until stop is closed or 30,000 writes were made.
func contend(t *testing.T, g Gomega, ns, ip string, period time.Duration) (name string, stop func()) {
	name = "contender"
	kit.Create(g, b.Service(ns, name, b.PinnedByHand(ip)))
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for i := range 30000 {
			select {
			case <-done:
				return
			case <-time.After(period):
			}
			patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"test/try":"%d"}}}`, i))
			_ = k8s.Patch(context.Background(), b.Service(ns, name), client.RawPatch(types.MergePatchType, patch))
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-finished }) }
	t.Cleanup(stop)
	return name, stop
}

// handoffs associates and dissociates Service "a" with claim "web" n times
// each, back to back, and returns how many rounds completed in time.
func handoffs(g Gomega, ns, ip string, n int, within time.Duration) int {
	svc := b.Service(ns, "a", b.ForClaim("web"))
	kit.Create(g, svc)
	done := 0
	for range n {
		ok := g.Eventually(ingressOf(g, ns, "a"), within, 20*time.Millisecond).Should(Equal([]string{ip}))
		removeAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
		ok = ok && g.Eventually(holders(g, ip), within, 20*time.Millisecond).Should(ConsistOf(HavePrefix(placeholderNS+"/")))
		kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		if ok {
			done++
		}
	}
	return done
}

// TestAContenderNeverGetsASharedAddress: while a claim's address goes back
// and forth between its hold and a Service 200 times (100 associations,
// 100 dissociations), a Service pinned to the same address by hand asks
// MetalLB for it continuously; it never gets it.
func TestAContenderNeverGetsASharedAddress(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	watcher := watchIPs(t, g, addr.Address)
	contender, stop := contend(t, g, ns, addr.Address, 20*time.Millisecond)
	g.Expect(handoffs(g, ns, addr.Address, 100, timeout)).To(Equal(100))
	stop()
	g.Expect(watcher.Took(ns, contender)).To(BeZero(), "the contender got the address")
	g.Expect(watcher.Gaps()[addr.Address]).To(BeEmpty())
	t.Logf("200 shared handoffs, %d watch events: the contender never got %s", watcher.events, addr.Address)
}

// contenderRounds is how many associations and dissociations the gap-mode
// contender test runs: 20 in the suite, where every theft costs MetalLB full
// passes over the suite's hundreds of Services; GAP_CONTENDER_ROUNDS=100
// gives the 200 handoffs docs/performance.md reports.
func contenderRounds(t *testing.T) int {
	if v := os.Getenv("GAP_CONTENDER_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GAP_CONTENDER_ROUNDS=%q: want a positive number", v)
		}
		return n
	}
	return 20
}

// TestAContenderUnderTheGapHandoff runs the contender of the test above
// against a driver forced to the gap handoff, whose every window of an
// address free in MetalLB's books is the contender's chance. It counts how
// often the contender took the address, and proves each time that the claim
// did not lose it: once the contender is gone, the address is back with its
// hold or its carrier. Here the contender asks every 100 ms: MetalLB writes
// the status of a Service it gives the address to, and a rewrite every 20 ms
// on a loaded machine makes that write fail on a conflict again and again,
// so that MetalLB counts the address as the contender's while no Service
// reports it.
func TestAContenderUnderTheGapHandoff(t *testing.T) {
	startCore(t)
	startDriverWith(t, driver.HandoffGap)
	g := NewWithT(t)
	ns, _, _, addr := claimedAndHeld(t, g)
	watcher := watchIPs(t, g, addr.Address)
	const period, patience = 100 * time.Millisecond, 3 * timeout
	contender, stop := contend(t, g, ns, addr.Address, period)
	svc := b.Service(ns, "a")
	kit.Create(g, svc)
	stolen, rounds := 0, contenderRounds(t)
	// settle waits for want to report the address, or the contender; after
	// a theft it removes the contender and waits for want again.
	settle := func(want func() []string, what string) {
		g.Eventually(func() []string {
			if h := holders(g, addr.Address)(); slices.Contains(h, ns+"/"+contender) {
				return h
			}
			return want()
		}, patience, 20*time.Millisecond).ShouldNot(BeEmpty(), what)
		if !slices.Contains(holders(g, addr.Address)(), ns+"/"+contender) {
			return
		}
		stolen++
		stop()
		g.Expect(k8s.Delete(context.Background(), b.Service(ns, contender))).To(Succeed())
		g.Eventually(kit.Gone(b.Service(ns, contender)), timeout, tick).Should(BeTrue())
		g.Eventually(want, patience, tick).ShouldNot(BeEmpty(), "%s after the contender went", what)
		contender, stop = contend(t, g, ns, addr.Address, period)
	}
	carried := func() []string {
		if slices.Equal(ingressOf(g, ns, "a")(), []string{addr.Address}) {
			return []string{ns + "/a"}
		}
		return nil
	}
	held := func() []string {
		h := holders(g, addr.Address)()
		if len(h) == 1 && strings.HasPrefix(h[0], placeholderNS+"/") {
			return h
		}
		return nil
	}
	for range rounds {
		kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		settle(carried, "Service a carries the address")
		removeAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim)
		settle(held, "the hold has the address back")
	}
	stop()
	g.Expect(kit.AddressReason(g, addr.Name, v1alpha1.ConditionAssociated)()).To(Equal(driver.ReasonNotAssociated))
	g.Expect(kit.StateOfAddress(g, addr.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	t.Logf("%d gap handoffs, %d watch events: the contender took %s %d times (%d windows, longest %v)",
		2*rounds, watcher.events, addr.Address, stolen, len(watcher.Gaps()[addr.Address]), slices.Max(append(watcher.Gaps()[addr.Address], 0)))
}
