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
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

const (
	timeout = 30 * time.Second
	tick    = 100 * time.Millisecond
	// settle is how long a state that must not change is watched.
	settle = 2 * time.Second
)

// Run runs every spec of the contract against the cluster cfg reaches,
// with the core and the harness's driver running in the test process. The
// cluster must serve this project's CRDs and run kube-controller-manager's
// garbage collector, and the backend's allocator if it has one.
func Run(t *testing.T, cfg *rest.Config, h Harness) {
	c, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	// Each spec removes what it made, and fails if the backend keeps
	// anything of its classes.
	kit := testkit.New(c).Tidy(testkit.Tidying{Within: timeout, Leftovers: h.Leftovers})
	s := &suite{h: h, cfg: cfg, c: c, kit: kit, t: t, stepWrites: map[string]int{}}
	s.core = s.startCore()
	s.driver = h.StartDriver(t, cfg)
	for _, sp := range specs(h) {
		t.Run(sp.name, func(t *testing.T) { sp.run(t, NewWithT(t), s) })
	}
}

// spec is one behaviour of the contract.
type spec struct {
	name string
	run  func(t *testing.T, g *WithT, s *suite)
}

// suite is what the specs share: the harness, a client, and the running
// driver.
type suite struct {
	h   Harness
	cfg *rest.Config
	c   client.Client
	kit *testkit.Kit
	// t is Run's test: the core and the driver outlive the spec that
	// restarts them.
	t            *testing.T
	core, driver *inprocess.Manager
	// stepWrites counts the writes of each step of a claim's life, as the
	// first crash spec saw them.
	stepWrites map[string]int
}

// startCore runs a core, as a cluster runs it beside the driver, until
// Run's test ends.
func (s *suite) startCore() *inprocess.Manager {
	return inprocess.Start(s.t, s.cfg, func(mgr ctrl.Manager) error {
		return core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1})
	})
}

// stopCore stops the core for a while: restart starts it again, as does
// the end of t if the spec failed before it did (tidying needs it).
func (s *suite) stopCore(t *testing.T) (restart func()) {
	s.core.Stop()
	restart = func() {
		if !s.core.Running() {
			s.core = s.startCore()
		}
	}
	t.Cleanup(restart)
	return restart
}

// stopDriver stops the driver for a while: restart starts a new one, as
// does the end of t if the spec failed before it did.
func (s *suite) stopDriver(t *testing.T) (restart func()) {
	s.driver.Stop()
	restart = func() {
		if !s.driver.Running() {
			s.driver = s.h.StartDriver(s.t, s.cfg)
		}
	}
	t.Cleanup(restart)
	return restart
}

// class creates a class of the backend over ranges with policy and waits
// until the driver has rendered it.
func (s *suite) class(t *testing.T, g *WithT, policy v1alpha1.ReclaimPolicy, ranges ...netip.Prefix) string {
	name := testkit.Name(t)
	s.kit.Make(t, g, b.Class(name, s.h.Provisioner(), b.ClassReclaim(policy), b.Parameters(s.h.Parameters(ranges...))))
	g.Eventually(func() metav1.ConditionStatus {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(s.c.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		return testkit.Condition(c.Status.Conditions, v1alpha1.ConditionRendered).Status
	}, timeout, tick).Should(Equal(metav1.ConditionTrue), "class %s is rendered", name)
	return name
}

// heldClaim creates a namespace, a Retain class over fresh ranges and a
// claim "web" of family in them, and waits until the claim is Bound and
// the backend holds its addresses.
func (s *suite) heldClaim(t *testing.T, g *WithT, family v1alpha1.IPFamily) (string, []v1alpha1.ClaimedAddress) {
	ns := s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	s.claim(g, ns, "web", s.class(t, g, v1alpha1.ReclaimRetain, v4, v6), family)
	addrs := s.bound(g, ns, "web")
	s.held(g, addrs)
	return ns, addrs
}

// boundInFew makes a Delete class of the first n addresses of a fresh IPv4
// range and claim name of it in a new namespace, and waits for the claim to
// be Bound; it returns the namespace, the class and the claim's addresses.
func (s *suite) boundInFew(t *testing.T, g *WithT, n int, name string) (ns, class string, addrs []v1alpha1.ClaimedAddress) {
	ns = s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class = s.class(t, g, v1alpha1.ReclaimDelete, smaller(v4, 32, n))
	s.claim(g, ns, name, class, v1alpha1.IPv4)
	return ns, class, s.bound(g, ns, name)
}

// claim creates a claim of class for family in ns.
func (s *suite) claim(g *WithT, ns, name, class string, family v1alpha1.IPFamily) {
	s.kit.Create(g, b.Claim(ns, name, b.OfClass(class), b.Family(family)))
}

// bound waits for a claim to be Bound and returns its addresses.
func (s *suite) bound(g *WithT, ns, name string) []v1alpha1.ClaimedAddress {
	g.Eventually(s.kit.StateOfClaim(g, ns, name), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound), "claim %s/%s is Bound", ns, name)
	return s.kit.Claim(g, ns, name).Status.Addresses
}

// held waits until the driver reports each address held by the backend.
func (s *suite) held(g *WithT, addrs []v1alpha1.ClaimedAddress) { s.heldWithin(g, addrs, timeout) }

// heldWithin is held, waiting up to within for each address.
func (s *suite) heldWithin(g *WithT, addrs []v1alpha1.ClaimedAddress, within time.Duration) {
	for _, a := range addrs {
		g.Eventually(s.condition(g, a.Name, v1alpha1.ConditionHeld), within, tick).Should(HaveField("Status", metav1.ConditionTrue),
			"the backend holds %s", a.Address)
	}
}

// condition reads a condition of an address.
func (s *suite) condition(g *WithT, address, typ string) func() metav1.Condition {
	return func() metav1.Condition { return testkit.Condition(s.kit.Address(g, address).Status.Conditions, typ) }
}

// associatedTo reads which workload an address is associated with.
func (s *suite) associatedTo(g *WithT, address string) func() *v1alpha1.WorkloadReference {
	return func() *v1alpha1.WorkloadReference { return s.kit.Address(g, address).Status.AssociatedTo }
}

// noConflictReported: the driver never reported a conflict over addrs.
func (s *suite) noConflictReported(g *WithT, addrs []v1alpha1.ClaimedAddress) {
	for _, a := range addrs {
		g.Expect(s.kit.EventsAbout(g, s.kit.Address(g, a.Name), v1alpha1.EventAddressConflict)()).To(BeEmpty(),
			"no conflict over %s", a.Address)
	}
}

// ips are the addresses of a claim.
func ips(addrs []v1alpha1.ClaimedAddress) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.Address)
	}
	return out
}

// smaller is the index-th prefix of bits carved from p.
func smaller(p netip.Prefix, bits, index int) netip.Prefix {
	ip := p.Masked().Addr()
	for range index << (ip.BitLen() - bits) {
		ip = ip.Next()
	}
	return netip.PrefixFrom(ip, bits)
}
