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
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// contend creates Service "contender" in ns, pinned by hand to ip, and
// touches it every period, so that the backend considers its request again
// and again, until stop (or the end of t).
func (s *suite) contend(t *testing.T, g *WithT, hand HandPinner, ns, class, ip string, period time.Duration) (name string, stop func()) {
	name = "contender"
	svc := b.Service(ns, name)
	hand.PinByHand(svc, class, netip.MustParseAddr(ip))
	s.kit.Create(g, svc)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(period):
			}
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test/try":"%d"}}}`, i)
			_ = s.c.Patch(context.Background(), b.Service(ns, name), client.RawPatch(types.MergePatchType, patch))
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-finished }) }
	t.Cleanup(stop)
	return name, stop
}

// contenderShared: while a claim's address goes back and forth between its
// hold and a Service (10 associations and 10 dissociations; 100 of each
// under make test-stress), a Service pinned to it by hand asks the backend
// for it every 20 ms; it never gets it, and the address is never
// unreported.
func contenderShared(t *testing.T, g *WithT, s *suite, hand HandPinner) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	ip, class := addrs[0].Address, s.kit.Address(g, addrs[0].Name).Spec.ClassName
	g.Eventually(s.holderOf(g, ns, ip), timeout, tick).ShouldNot(BeEmpty())
	watcher := testkit.WatchIPs(t, g, s.cfg, ip)
	contender, stop := s.contend(t, g, hand, ns, class, ip, 20*time.Millisecond)
	rounds := testkit.Rounds(10, 100)
	svc := b.Service(ns, "a", b.ForClaim("web"))
	s.kit.Create(g, svc)
	for i := range rounds {
		g.Eventually(s.kit.Ingress(g, ns, "a"), timeout, 20*time.Millisecond).Should(Equal([]string{ip}), "association %d", i+1)
		s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "")
		g.Eventually(s.holderOf(g, ns, ip), timeout, 20*time.Millisecond).ShouldNot(BeEmpty(), "dissociation %d", i+1)
		s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
	}
	stop()
	g.Expect(watcher.Took(ns, contender)).To(BeZero(), "the contender got the address")
	g.Expect(watcher.Gaps()[ip]).To(BeEmpty())
	t.Logf("%d shared handoffs, %d watch events: the contender never got %s", 2*rounds, watcher.Events(), ip)
}

// contenderGap runs a contender against a driver forced to the gap
// handoff (5 rounds; 100 under make test-stress), whose every window of an
// address free in the backend's books is the contender's chance. It counts
// how often the contender took the address, and proves each time that the
// claim did not lose it: once the contender is gone, the address is back
// with its hold or its carrier. The contender asks every 100 ms: a backend
// that writes the status of the Service it gives the address to can fail
// that write on a conflict again and again under faster rewrites, and
// count the address as the contender's while no Service reports it.
func contenderGap(t *testing.T, g *WithT, s *suite, hand HandPinner, holder ServiceHolder) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	ip, class := addrs[0].Address, s.kit.Address(g, addrs[0].Name).Spec.ClassName
	// Cleanups run last first: the gap driver stops, then the harness's
	// own starts again.
	s.stopDriver(t)
	holder.StartGapDriver(t, s.cfg)
	g.Eventually(s.holderOf(g, ns, ip), timeout, tick).ShouldNot(BeEmpty())
	watcher := testkit.WatchIPs(t, g, s.cfg, ip)
	const period, patience = 100 * time.Millisecond, 3 * timeout
	contender, stop := s.contend(t, g, hand, ns, class, ip, period)
	svc := b.Service(ns, "a")
	s.kit.Create(g, svc)
	stolen, rounds := 0, testkit.Rounds(5, 100)
	// settle waits for want to report the address, or the contender; after
	// a theft it removes the contender and waits for want again.
	settle := func(want func() string, what string) {
		g.Eventually(func() string {
			if slices.Contains(s.kit.Holders(g, ip)(), ns+"/"+contender) {
				return contender
			}
			return want()
		}, patience, 20*time.Millisecond).ShouldNot(BeEmpty(), what)
		if !slices.Contains(s.kit.Holders(g, ip)(), ns+"/"+contender) {
			return
		}
		stolen++
		stop()
		g.Expect(s.c.Delete(context.Background(), b.Service(ns, contender))).To(Succeed())
		g.Eventually(s.kit.Gone(b.Service(ns, contender)), timeout, tick).Should(BeTrue())
		g.Eventually(want, patience, tick).ShouldNot(BeEmpty(), "%s after the contender went", what)
		contender, stop = s.contend(t, g, hand, ns, class, ip, period)
	}
	carried := func() string {
		if slices.Equal(s.kit.Ingress(g, ns, "a")(), []string{ip}) {
			return ns + "/a"
		}
		return ""
	}
	for range rounds {
		s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		settle(carried, "Service a carries the address")
		s.kit.SetAnnotation(g, svc, v1alpha1.AnnotationIPAddressClaim, "")
		settle(s.holderOf(g, ns, ip), "the hold has the address back")
	}
	stop()
	g.Expect(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionAssociated)()).To(Equal(driver.ReasonNotAssociated))
	g.Expect(s.kit.StateOfAddress(g, addrs[0].Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
	t.Logf("%d gap handoffs, %d watch events: the contender took %s %d times (%d windows, longest %v)",
		2*rounds, watcher.Events(), ip, stolen, len(watcher.Gaps()[ip]), slices.Max(append(watcher.Gaps()[ip], 0)))
}

// carrierDeletedWhileDown: the carrier finalizer keeps a Service that
// shares its claim's address Terminating while the driver is down; the
// operating manual's procedure (testkit.CarrierFinalizerScript, run with
// kubectl, with the backend's finalizer in place of MetalLB's) lets it go,
// and the driver, back, holds the address again.
func carrierDeletedWhileDown(t *testing.T, g *WithT, s *suite) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	s.kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	g.Eventually(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	restart := s.stopDriver(t)

	g.Expect(s.c.Delete(context.Background(), s.kit.Service(g, ns, "a"))).To(Succeed())
	g.Consistently(func() bool { return s.kit.Service(g, ns, "a").DeletionTimestamp != nil }, time.Second, tick).Should(BeTrue(),
		"the Service waits for the driver")

	assets, err := cluster.FindAssets()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cluster.WriteKubeconfig(kubeconfig, s.cfg)).To(Succeed())
	script := strings.ReplaceAll(testkit.CarrierFinalizerScript, v1alpha1.DriverCarrierFinalizer(v1alpha1.ProvisionerMetalLB),
		v1alpha1.DriverCarrierFinalizer(s.h.Provisioner()))
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+filepath.Dir(assets.Kubectl())+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Eventually(s.kit.Gone(b.Service(ns, "a")), timeout, tick).Should(BeTrue())

	restart()
	s.held(g, addrs)
	g.Eventually(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonNotAssociated))
}

// formerTenant: a Retain claim carried by a Service through a shared
// handoff is deleted. Its former carrier keeps nothing the driver wrote,
// the hold has the address back with no moment unreported and then shares
// a key of its own, and a Service carrying everything the tenant could read
// on its carrier (the backend's pin and sharing key, and the labels that
// select the pool) does not get the address: the hold keeps it.
func formerTenant(t *testing.T, g *WithT, s *suite, holder ServiceHolder) {
	ns, addrs := s.heldClaim(t, g, v1alpha1.IPv4)
	ip := addrs[0].Address
	g.Eventually(s.holderOf(g, ns, ip), timeout, tick).ShouldNot(BeEmpty())
	s.kit.Create(g, b.Service(ns, "a", b.ForClaim("web")))
	s.carried(g, ns, "a", addrs)
	g.Eventually(s.kit.AddressReason(g, addrs[0].Name, v1alpha1.ConditionAssociated), timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
	worn := s.kit.Service(g, ns, "a")
	oldKey := holder.KeyOf(worn)
	g.Expect(oldKey).NotTo(BeEmpty(), "the tenant can read the key on its Service")

	watcher := testkit.WatchIPs(t, g, s.cfg, ip)
	g.Expect(s.c.Delete(context.Background(), b.Claim(ns, "web"))).To(Succeed())
	g.Eventually(s.kit.StateOfAddress(g, addrs[0].Name), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressReleased))
	g.Eventually(func(g Gomega) {
		svc := s.kit.Service(g, ns, "a")
		for k := range worn.Annotations {
			if k != v1alpha1.AnnotationIPAddressClaim {
				g.Expect(svc.Annotations).NotTo(HaveKey(k), "the former carrier keeps no annotation the driver wrote")
			}
		}
		for k := range worn.Labels {
			g.Expect(svc.Labels).NotTo(HaveKey(k), "the former carrier keeps no label the driver wrote")
		}
		g.Expect(svc.Finalizers).NotTo(ContainElement(v1alpha1.DriverCarrierFinalizer(s.h.Provisioner())))
		g.Expect(svc.Status.LoadBalancer.Ingress).To(BeEmpty())
	}, timeout, tick).Should(Succeed())
	hold := func() string {
		hns, name, _ := strings.Cut(s.holderOf(g, ns, ip)(), "/")
		svc := &corev1.Service{}
		if name == "" || s.c.Get(context.Background(), client.ObjectKey{Namespace: hns, Name: name}, svc) != nil {
			return ""
		}
		return holder.KeyOf(svc)
	}
	g.Eventually(hold, timeout, tick).Should(And(Not(BeEmpty()), Not(Equal(oldKey))), "the hold shares a key no tenant saw")
	g.Expect(watcher.Gaps()[ip]).To(BeEmpty(), "the hold had the address back before the carrier let go")

	thief := b.Service(ns, "thief")
	for k, v := range worn.Annotations {
		if k != v1alpha1.AnnotationIPAddressClaim && !strings.HasPrefix(k, v1alpha1.GroupVersion.Group+"/") {
			metav1.SetMetaDataAnnotation(&thief.ObjectMeta, k, v)
		}
	}
	for k, v := range worn.Labels {
		metav1.SetMetaDataLabel(&thief.ObjectMeta, k, v)
	}
	g.Expect(holder.KeyOf(thief)).To(Equal(oldKey))
	s.kit.Create(g, thief)
	g.Eventually(s.refusedOn(g, thief), timeout, tick).ShouldNot(BeEmpty(), "the backend refuses the old key")
	g.Consistently(s.holderOf(g, ns, ip), settle, tick).ShouldNot(BeEmpty())
	g.Expect(watcher.Took(ns, "thief")).To(BeZero(), "the former tenant's Service got the address")
	g.Expect(s.kit.StateOfAddress(g, addrs[0].Name)()).To(HaveField("Phase", v1alpha1.AddressReleased))
}
