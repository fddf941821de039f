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
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

const (
	placeholderNS = "metallb-iad-system"
	provisioner   = v1alpha1.ProvisionerMetalLB
	timeout       = 30 * time.Second
	tick          = 100 * time.Millisecond
)

var (
	testCluster *cluster.Cluster
	k8s         client.Client
	kit         *testkit.Kit
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		if testCluster, err = cluster.Start(cluster.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = testCluster.Stop() }()
		if k8s, err = client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		kit = testkit.New(k8s)
		level := zapcore.ErrorLevel
		if os.Getenv("DRIVER_TEST_VERBOSE") != "" {
			level = zapcore.DebugLevel
		}
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(level)))
		if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placeholderNS}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

func startCore(t *testing.T) *inprocess.Manager {
	return inprocess.Start(t, testCluster.Config, func(mgr ctrl.Manager) error {
		return core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1})
	})
}

func startDriver(t *testing.T) *inprocess.Manager {
	return startDriverWith(t, driver.HandoffAuto)
}

// startDriverWith runs the driver with the handoff mode given.
func startDriverWith(t *testing.T, handoff string) *inprocess.Manager {
	return startDriverOpts(t, handoff, 0, false)
}

// startTrustingDriver runs a driver whose gate never shuts: what it does
// after a test stops MetalLB is what a driver does in the moments before it
// notices.
func startTrustingDriver(t *testing.T, handoff string) *inprocess.Manager {
	return startDriverOpts(t, handoff, 0, true)
}

func startDriverOpts(t *testing.T, handoff string, trust time.Duration, always bool) *inprocess.Manager {
	opts := metallb.Options{PlaceholderNamespace: placeholderNS, MetalLBNamespace: cluster.MetalLBNamespace,
		TrustMetalLBFor: trust, TrustMetalLBAlways: always}
	opts.Driver.Concurrency = 4
	opts.Driver.Handoff = handoff
	return inprocess.Start(t, testCluster.Config, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
}

// startBoth runs the core and the driver until the test ends.
func startBoth(t *testing.T) (coreManager, driverManager *inprocess.Manager) { //nolint:unparam // symmetric; no test stops the core yet
	return startCore(t), startDriver(t)
}

var nextRange atomic.Int32

// freshRange returns an IPv4 /28 and an IPv6 /124 no other test uses, so
// that classes never overlap.
func freshRange() (v4, v6 string) {
	n := nextRange.Add(1)
	return fmt.Sprintf("10.%d.%d.0/28", 100+n/250, n%250), fmt.Sprintf("fd00:%x::/124", 0x100+n)
}

// metallbClass creates a class served by the driver over a fresh IPv4 range
// (and IPv6 range with dual) and returns its name and ranges.
func metallbClass(t *testing.T, g Gomega, dual bool, opts ...b.ClassOption) (name, v4, v6 string) {
	name = testkit.Name(t)
	v4, v6 = freshRange()
	addresses := fmt.Sprintf(`[%q]`, v4)
	if dual {
		addresses = fmt.Sprintf(`[%q, %q]`, v4, v6)
	}
	opts = append([]b.ClassOption{b.Parameters(`{"addresses": ` + addresses + `, "avoidBuggyIPs": true}`)}, opts...)
	kit.Create(g, b.Class(name, provisioner, opts...))
	g.Eventually(func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionRendered)
	}, timeout, tick).Should(HavePrefix("Rendered"))
	return name, v4, v6
}

// boundAddress waits for the claim to be Bound and returns its first address.
func boundAddress(g Gomega, ns, claim string) v1alpha1.ClaimedAddress { //nolint:unparam // any claim, though tests name theirs web
	g.Eventually(kit.StateOfClaim(g, ns, claim), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	return kit.Claim(g, ns, claim).Status.Addresses[0]
}

// holders lists "namespace/name" of every Service whose load balancer
// reports ip.
func holders(g Gomega, ip string) func() []string { return kit.Holders(g, ip) }

// heldByPlaceholder: exactly one Service holds ip, a placeholder.
func heldByPlaceholder(g Gomega, ip string) {
	g.Eventually(holders(g, ip), timeout, tick).Should(ConsistOf(HavePrefix(placeholderNS + "/")))
}

// placeholders lists the placeholders of an address.
func placeholders(g Gomega, addressName string) func() []string {
	return func() []string {
		list := &corev1.ServiceList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(placeholderNS),
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

func ingressOf(g Gomega, ns, name string) func() []string { return kit.Ingress(g, ns, name) }

// pool reads the rendered MetalLB object of kind for a class.
func rendered(_ Gomega, kind, class string) func() *unstructured.Unstructured {
	return func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(params.GroupVersion.WithKind(kind))
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: cluster.MetalLBNamespace, Name: params.PoolName(class)}, u)
		if err != nil {
			return nil
		}
		return u
	}
}

func inRange(cidr string) func(string) bool {
	p := netip.MustParsePrefix(cidr)
	return func(ip string) bool { return p.Contains(netip.MustParseAddr(ip)) }
}

// claimedAndHeld creates a namespace, a MetalLB class and a claim "web" of
// it, waits until the claim is Bound and a placeholder holds its address,
// and returns them.
func claimedAndHeld(t *testing.T, g Gomega, opts ...b.ClassOption) (ns, class, v4 string, addr v1alpha1.ClaimedAddress) { //nolint:unparam // class options for tests that need them
	ns = kit.Namespace(t)
	class, v4, _ = metallbClass(t, g, false, opts...)
	kit.Create(g, b.Claim(ns, "web", b.OfClass(class)))
	addr = boundAddress(g, ns, "web")
	heldByPlaceholder(g, addr.Address)
	return ns, class, v4, addr
}

// steal stops the driver, deletes the address's hold and lets thief take the
// address, then starts the driver again and returns it.
func steal(t *testing.T, g Gomega, running *inprocess.Manager, addr v1alpha1.ClaimedAddress, thief *corev1.Service) *inprocess.Manager { //nolint:unparam // the restarted driver, for tests that stop it again
	running.Stop()
	for _, name := range placeholders(g, addr.Name)() {
		g.Expect(k8s.Delete(context.Background(), b.Service(placeholderNS, name))).To(Succeed())
	}
	kit.Create(g, thief)
	g.Eventually(ingressOf(g, thief.Namespace, thief.Name), timeout, tick).Should(Equal([]string{addr.Address}))
	return startDriver(t)
}

// restartMetalLB starts the MetalLB controller again if a test stopped it
// and did not start it itself.
func restartMetalLB() {
	if testCluster.MetalLBPID() == 0 {
		_ = testCluster.StartMetalLB()
	}
}
