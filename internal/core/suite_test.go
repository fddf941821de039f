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

package core_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

// provisioner names a driver that is not running: these tests exercise the
// core alone, so nothing is ever provisioned.
const provisioner = "example.drivers.local.sdn.cozystack.io"

var (
	testCluster *cluster.Cluster
	k8s         client.Client
	kit         *testkit.Kit
)

// TestMain runs the tests against one control plane. Every test removes what
// it made (the kit tidies: namespaces through kube-controller-manager's
// namespace controller, classes and addresses through the core), and the
// package fails if anything is left once they all ran.
//
// kube-controller-manager runs for its namespace controller. No test
// depends on its absence: its garbage collector has nothing to collect here
// (neither the core nor the tests set owner references), and no test deletes
// a namespace of its own accord.
func TestMain(m *testing.M) {
	testkit.Parallel(8)
	os.Exit(testkit.Main(cluster.Options{WithoutMetalLB: true}, func(c *cluster.Cluster, k client.Client) (int, error) {
		testCluster, k8s = c, k
		kit = testkit.New(k8s).Tidy(testkit.Tidying{Within: tidyTimeout, Prepare: prepareTidying})
		testkit.SetLogger("CORE_TEST_VERBOSE")
		before, err := kit.Inventory(context.Background(), sights())
		if err != nil {
			return 1, err
		}
		if code := m.Run(); code != 0 {
			return code, nil
		}
		return kit.LeftBehind(before, sights(), tidyTimeout), nil
	}))
}

// sights are what a test can leave behind: namespaces, classes, addresses,
// and the claims and usage ledgers in any namespace. A test that leaks
// makes every later one pay for it (the finalizer-clearing commands patch
// every object in the cluster, one kubectl call each).
func sights() []testkit.Sight {
	return []testkit.Sight{
		{Kind: "Namespace", List: &corev1.NamespaceList{}},
		{Kind: "IPAddressClass", List: &v1alpha1.IPAddressClassList{}},
		{Kind: "IPAddress", List: &v1alpha1.IPAddressList{}},
		{Kind: "IPAddressClaim", List: &v1alpha1.IPAddressClaimList{}},
		{Kind: "IPAddressClassUsage", List: &v1alpha1.IPAddressClassUsageList{}},
	}
}

// cores keeps at most one core running: two cores would both reconcile
// every object of the cluster, as replicas without leader election, and a
// test's shifted clock would decide only some of its objects' passes.
//
// Tests that need nothing special share one core and run in parallel
// (shareCore). Tests that shift their core's clock, stop it, or prepare
// objects before any core sees them start a core of their own (startCore)
// and stay serial: Go runs every serial test of the package before the
// parallel ones, so the two kinds never overlap, and the shared core runs
// only while a test uses it.
var cores struct {
	sync.Mutex
	// own is the core the running serial test started, if any.
	own *inprocess.Manager
	// shared is the parallel tests' core, and users how many tests run on
	// it now.
	shared *inprocess.Manager
	users  int
}

func setupCore(clk *shiftClock) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		opts := core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1}
		if clk != nil {
			opts.Clock = clk
		}
		return core.Setup(mgr, opts)
	}
}

// shareCore runs t in parallel with the other tests that share the
// package's core, on that core (started if t is the first to need it).
func shareCore(t *testing.T) {
	t.Helper()
	t.Parallel()
	cores.Lock()
	defer cores.Unlock()
	if cores.own != nil && cores.own.Running() {
		t.Fatal("a serial test's own core is running: a test that starts its core must not call t.Parallel")
	}
	if cores.users == 0 {
		m, err := inprocess.Run(testCluster.Config, setupCore(nil))
		if err != nil {
			t.Fatal(err)
		}
		cores.shared = m
	}
	cores.users++
	// Registered before anything the test makes, so it runs after the kit
	// has tidied up (cleanups run last first): the core lets go of the
	// test's objects.
	t.Cleanup(func() {
		cores.Lock()
		defer cores.Unlock()
		if cores.users--; cores.users == 0 {
			cores.shared.Stop()
			if err := cores.shared.Err(); err != nil {
				t.Errorf("the shared core: %v", err)
			}
		}
	})
}

// shiftClock is the real clock moved forward by an offset a test controls,
// so that a test can jump past a long releaseDelay without waiting for it.
type shiftClock struct{ offset atomic.Int64 }

func (c *shiftClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *shiftClock) advance(d time.Duration)         { c.offset.Add(int64(d)) }

// startCore runs a core of the test's own in this process until the test
// ends, and returns the clock it runs on and a function that stops it early.
// The test must stay serial (see cores).
func startCore(t *testing.T) (*shiftClock, func()) {
	t.Helper()
	return startCoreOn(t, testCluster.Config)
}

// startCoreOn is startCore talking to the API server through cfg (one
// whose requests the test meddles with).
func startCoreOn(t *testing.T, cfg *rest.Config) (*shiftClock, func()) {
	t.Helper()
	cores.Lock()
	defer cores.Unlock()
	if cores.users > 0 {
		t.Fatal("tests sharing the core are running: a test that starts its own must not call t.Parallel")
	}
	clk := &shiftClock{}
	cores.own = inprocess.Start(t, cfg, setupCore(clk))
	return clk, cores.own.Stop
}

// prepareTidying makes sure a core runs while the kit removes a test's
// objects (it drops their finalizers): the test's own or the shared one, or,
// for a test that stopped its core or started it after its first namespace,
// one started for the cleanup.
func prepareTidying(t *testing.T) {
	cores.Lock()
	running := cores.users > 0 || (cores.own != nil && cores.own.Running())
	cores.Unlock()
	if !running {
		startCore(t)
	}
}

const (
	timeout = 20 * time.Second
	tick    = 50 * time.Millisecond
	// tidyTimeout bounds the wait for each kind of a test's objects to go
	// when it ends, and for the package's to go after its last test:
	// kube-controller-manager takes seconds over each namespace.
	tidyTimeout = time.Minute
)

// claimThenPreBind creates a claim, waits until the core has seen it, then
// creates addresses pre-bound to it, owned by t: the order the operating
// procedures prescribe (an address whose claim does not exist yet is
// reclaimed at once).
func claimThenPreBind(t *testing.T, g Gomega, claim *v1alpha1.IPAddressClaim, addrs ...*v1alpha1.IPAddress) {
	kit.Create(g, claim)
	g.Eventually(func() []string { return kit.Finalizers(g, claim) }, timeout, tick).Should(ContainElement(v1alpha1.FinalizerClaimProtection))
	for _, a := range addrs {
		b.PreBound(claim.Namespace, claim.Name)(a)
		kit.Make(t, g, a)
	}
}

// bindByPreBinding is claimThenPreBind, then waits for the claim to be
// Bound.
func bindByPreBinding(t *testing.T, g Gomega, claim *v1alpha1.IPAddressClaim, addrs ...*v1alpha1.IPAddress) {
	claimThenPreBind(t, g, claim, addrs...)
	g.Eventually(kit.StateOfClaim(g, claim.Namespace, claim.Name), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
}
