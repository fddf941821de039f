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

package metallbtest

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/drivertest"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

const (
	// PlaceholderNS is the driver's placeholder namespace.
	PlaceholderNS = "metallb-iad-system"
	// Provisioner is the driver's name in a class's spec.provisioner.
	Provisioner = v1alpha1.ProvisionerMetalLB
	// Timeout bounds every wait for a state to come.
	Timeout = 30 * time.Second
	// Tick is how often a wait looks.
	Tick = 100 * time.Millisecond
)

// What the package's tests share, set by Main.
var (
	// Cluster is the test binary's control plane, MetalLB's controller
	// included.
	Cluster *cluster.Cluster
	// Client talks to it as a cluster admin.
	Client client.Client
	// Kit reads and writes through Client, and tidies up after each test.
	Kit *testkit.Kit
)

// Options say what Main starts besides the cluster.
type Options struct {
	// SharedManagers runs one core and one driver (shared handoff) for the
	// whole package: for tests that stop nothing. StartCore and the
	// StartDriver functions then fail the test that calls them.
	SharedManagers bool
}

// managers are the cores and drivers started, so that a test's cleanup
// knows whether one still runs.
var managers struct {
	sync.Mutex
	shared         bool
	cores, drivers []*inprocess.Manager
}

// Main is a test package's TestMain: it starts the cluster (and the shared
// managers if opts asks), runs the tests, stops everything and returns the
// exit code.
func Main(m *testing.M, opts Options) int {
	testkit.Parallel(8)
	return testkit.Main(cluster.Options{}, func(c *cluster.Cluster, k client.Client) (int, error) {
		Cluster, Client = c, k
		Kit = testkit.New(Client).Tidy(testkit.Tidying{Within: Timeout, Prepare: prepareTidying, Leftovers: Leftovers})
		testkit.SetLogger("DRIVER_TEST_VERBOSE")
		if err := Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PlaceholderNS}}); err != nil {
			return 1, err
		}
		before, err := Kit.Inventory(context.Background(), sights())
		if err != nil {
			return 1, err
		}
		if opts.SharedManagers {
			stop, err := startShared()
			if err != nil {
				return 1, err
			}
			defer stop()
		}
		if code := m.Run(); code != 0 {
			return code, nil
		}
		return Kit.LeftBehind(before, sights(), time.Minute), nil
	})
}

// sights are what a test can leave behind: namespaces, classes, addresses,
// the driver's placeholders and MetalLB's pools and advertisements. The
// gate's probes, which come and go on their own, are left out.
func sights() []testkit.Sight {
	probe := func(name string) bool { return strings.HasPrefix(name, "metallb-iad-probe-") }
	metallbKinds := []string{params.IPAddressPoolGVK.Kind, params.L2AdvertisementGVK.Kind, params.BGPAdvertisementGVK.Kind}
	out := make([]testkit.Sight, 0, 4+len(metallbKinds))
	out = append(out,
		testkit.Sight{Kind: "Namespace", List: &corev1.NamespaceList{}},
		testkit.Sight{Kind: "IPAddressClass", List: &v1alpha1.IPAddressClassList{}},
		testkit.Sight{Kind: "IPAddress", List: &v1alpha1.IPAddressList{}},
		testkit.Sight{Kind: "Service", List: &corev1.ServiceList{}, Namespace: PlaceholderNS, Skip: probe},
	)
	for _, kind := range metallbKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(params.GroupVersion.WithKind(kind + "List"))
		out = append(out, testkit.Sight{Kind: kind, List: list, Namespace: cluster.MetalLBNamespace})
	}
	return out
}

// startShared runs the package's core and driver.
func startShared() (stop func(), err error) {
	c, err := inprocess.Run(Cluster.Config, setupCore)
	if err != nil {
		return nil, err
	}
	opts := driverOptions(driver.HandoffAuto, 0, false)
	d, err := inprocess.Run(Cluster.Config, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
	if err != nil {
		c.Stop()
		return nil, err
	}
	managers.Lock()
	managers.shared = true
	managers.cores, managers.drivers = []*inprocess.Manager{c}, []*inprocess.Manager{d}
	managers.Unlock()
	return func() { d.Stop(); c.Stop() }, nil
}

func setupCore(mgr ctrl.Manager) error {
	return core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1})
}

// own records a manager a test started; it fails the test if the package
// shares its managers.
func own(list *[]*inprocess.Manager, m *inprocess.Manager) *inprocess.Manager {
	managers.Lock()
	defer managers.Unlock()
	*list = append(*list, m)
	return m
}

func refuseShared(t *testing.T) {
	t.Helper()
	managers.Lock()
	defer managers.Unlock()
	if managers.shared {
		t.Fatal("this package's core and driver are shared: a test that starts or stops its own belongs in stoptest")
	}
}

// StartCore runs a core until the test ends.
func StartCore(t *testing.T) *inprocess.Manager {
	t.Helper()
	refuseShared(t)
	return own(&managers.cores, inprocess.Start(t, Cluster.Config, setupCore))
}

// StartDriver runs a driver (shared handoff) until the test ends.
func StartDriver(t *testing.T) *inprocess.Manager { return StartDriverWith(t, driver.HandoffAuto) }

// StartDriverWith runs a driver with the handoff mode given.
func StartDriverWith(t *testing.T, handoff string) *inprocess.Manager {
	return StartDriverOpts(t, handoff, 0, false)
}

// StartTrustingDriver runs a driver whose gate never shuts: what it does
// after a test stops MetalLB is what a driver does in the moments before it
// notices.
func StartTrustingDriver(t *testing.T, handoff string) *inprocess.Manager {
	return StartDriverOpts(t, handoff, 0, true)
}

// StartDriverOpts runs a driver with the handoff mode given, trusting
// MetalLB for trust after its last answer, or always.
func StartDriverOpts(t *testing.T, handoff string, trust time.Duration, always bool) *inprocess.Manager {
	t.Helper()
	return StartDriverOn(t, Cluster.Config, driverOptions(handoff, trust, always))
}

// StartDriverOn runs a driver with opts against cfg (a killer's, say).
func StartDriverOn(t *testing.T, cfg *rest.Config, opts metallb.Options) *inprocess.Manager {
	t.Helper()
	refuseShared(t)
	m := inprocess.Start(t, cfg, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
	return own(&managers.drivers, m)
}

// DriverOptions are the options the tests' drivers run with.
func DriverOptions(handoff string) metallb.Options { return driverOptions(handoff, 0, false) }

func driverOptions(handoff string, trust time.Duration, always bool) metallb.Options {
	opts := metallb.Options{PlaceholderNamespace: PlaceholderNS, MetalLBNamespace: cluster.MetalLBNamespace,
		TrustMetalLBFor: trust, TrustMetalLBAlways: always}
	opts.Driver.Concurrency = 4
	opts.Driver.Handoff = handoff
	return opts
}

// StartBoth runs a core and a driver until the test ends.
func StartBoth(t *testing.T) (coreManager, driverManager *inprocess.Manager) {
	return StartCore(t), StartDriver(t)
}

// prepareTidying makes sure that what lets go of a test's objects runs
// while the kit removes them: MetalLB, and, where tests run their own, a
// core and a driver (started for the cleanup if the test stopped its own).
func prepareTidying(t *testing.T) {
	if Cluster.MetalLBPID() == 0 {
		if err := Cluster.StartMetalLB(); err != nil {
			t.Errorf("tidying up: starting MetalLB: %v", err)
		}
	}
	managers.Lock()
	shared, coreUp, drvUp := managers.shared, anyRunning(managers.cores), anyRunning(managers.drivers)
	managers.Unlock()
	if shared {
		return
	}
	if !coreUp {
		StartCore(t)
	}
	if !drvUp {
		StartDriver(t)
	}
}

func anyRunning(list []*inprocess.Manager) bool {
	for _, m := range list {
		if m.Running() {
			return true
		}
	}
	return false
}

// Namespace makes a namespace for the test, removed when it ends.
func Namespace(t *testing.T) string { return Kit.Namespace(t) }

var nextRange atomic.Int32

// FreshRange returns an IPv4 /28 (the first of a /24 in 100.64.0.0/10,
// so that it ends in "0/28") and an IPv6 /124 (in 2001:db8::/32) no other
// test of the binary uses, so that classes never overlap.
func FreshRange() (v4, v6 string) {
	n := nextRange.Add(1)
	return fmt.Sprintf("100.%d.%d.0/28", 64+n/256, n%256), fmt.Sprintf("2001:db8:%x::/124", n)
}

// Class creates a class served by the driver over a fresh IPv4 range (and
// IPv6 range with dual), removed when the test ends, waits until it is
// rendered and returns its name and ranges.
func Class(t *testing.T, g Gomega, dual bool, opts ...b.ClassOption) (name, v4, v6 string) {
	name = testkit.Name(t)
	v4, v6 = FreshRange()
	addresses := fmt.Sprintf(`[%q]`, v4)
	if dual {
		addresses = fmt.Sprintf(`[%q, %q]`, v4, v6)
	}
	opts = append([]b.ClassOption{b.Parameters(`{"addresses": ` + addresses + `, "avoidBuggyIPs": true}`)}, opts...)
	class := b.Class(name, Provisioner, opts...)
	Kit.Own(t, class)
	Kit.Create(g, class)
	g.Eventually(func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(Client.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionRendered)
	}, Timeout, Tick).Should(HavePrefix("Rendered"))
	return name, v4, v6
}

// BoundAddress waits for the claim to be Bound and returns its first address.
func BoundAddress(g Gomega, ns, claim string) v1alpha1.ClaimedAddress {
	g.Eventually(Kit.StateOfClaim(g, ns, claim), Timeout, Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	return Kit.Claim(g, ns, claim).Status.Addresses[0]
}

// ClaimedAndHeld creates a namespace, a class and a claim "web" of it,
// waits until the claim is Bound and a placeholder holds its address, and
// returns them.
func ClaimedAndHeld(t *testing.T, g Gomega, opts ...b.ClassOption) (ns, class, v4 string, addr v1alpha1.ClaimedAddress) {
	ns = Namespace(t)
	class, v4, _ = Class(t, g, false, opts...)
	Kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	addr = BoundAddress(g, ns, "web")
	HeldByPlaceholder(g, addr.Address)
	return ns, class, v4, addr
}

// Holders lists "namespace/name" of every Service whose load balancer
// reports ip.
func Holders(g Gomega, ip string) func() []string { return Kit.Holders(g, ip) }

// HeldByPlaceholder waits until exactly one Service holds ip, a placeholder.
func HeldByPlaceholder(g Gomega, ip string) {
	g.Eventually(Holders(g, ip), Timeout, Tick).Should(ConsistOf(HavePrefix(PlaceholderNS + "/")))
}

// Placeholders lists the placeholders of an address.
func Placeholders(g Gomega, addressName string) func() []string {
	return func() []string {
		list := &corev1.ServiceList{}
		g.Expect(Client.List(context.Background(), list, client.InNamespace(PlaceholderNS),
			client.MatchingLabels{v1alpha1.LabelAddress: addressName})).To(Succeed())
		var out []string
		for _, s := range list.Items {
			if s.DeletionTimestamp == nil {
				out = append(out, s.Name)
			}
		}
		return out
	}
}

// IngressOf lists the IPs a Service's load balancer reports.
func IngressOf(g Gomega, ns, name string) func() []string { return Kit.Ingress(g, ns, name) }

// Rendered reads the MetalLB object of kind rendered for a class.
func Rendered(kind, class string) func() *unstructured.Unstructured {
	return func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(params.GroupVersion.WithKind(kind))
		err := Client.Get(context.Background(), client.ObjectKey{Namespace: cluster.MetalLBNamespace, Name: params.PoolName(class)}, u)
		if err != nil {
			return nil
		}
		return u
	}
}

// InRange says whether an IP is in cidr.
func InRange(cidr string) func(string) bool {
	p := netip.MustParsePrefix(cidr)
	return func(ip string) bool { return p.Contains(netip.MustParseAddr(ip)) }
}

// RemoveAnnotation removes an annotation from obj.
func RemoveAnnotation(g Gomega, obj client.Object, key string) { Kit.SetAnnotation(g, obj, key, "") }

// Leftovers are the placeholders and rendered MetalLB objects of a class:
// what the driver keeps for it, gone once the class is.
func Leftovers(ctx context.Context, c client.Client, class string) ([]string, error) {
	labels := map[string]string{v1alpha1.LabelClass: class}
	out, err := drivertest.Objects(ctx, c, &corev1.ServiceList{}, "Service", PlaceholderNS, labels)
	if err != nil {
		return nil, err
	}
	for _, kind := range []string{params.IPAddressPoolGVK.Kind, params.L2AdvertisementGVK.Kind, params.BGPAdvertisementGVK.Kind} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(params.GroupVersion.WithKind(kind + "List"))
		more, err := drivertest.Objects(ctx, c, list, kind, cluster.MetalLBNamespace, labels)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}
