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
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/manager"
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

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		testCluster, err = cluster.Start(cluster.Options{WithoutMetalLB: true, WithoutControllerManager: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = testCluster.Stop() }()
		if k8s, err = client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		kit = testkit.New(k8s)
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
		return m.Run()
	}())
}

// shiftClock is the real clock moved forward by an offset a test controls,
// so that a test can jump past a long releaseDelay without waiting for it.
type shiftClock struct{ offset atomic.Int64 }

func (c *shiftClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *shiftClock) advance(d time.Duration)         { c.offset.Add(int64(d)) }

// startCore runs the core in this process until the test ends, and returns
// the clock it runs on and a function that stops it early.
func startCore(t *testing.T) (*shiftClock, func()) {
	t.Helper()
	clk := &shiftClock{}
	m := inprocess.Start(t, testCluster.Config, func(mgr ctrl.Manager) error {
		return core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1, Clock: clk})
	})
	return clk, m.Stop
}

const (
	timeout = 20 * time.Second
	tick    = 50 * time.Millisecond
)

// zapLevel logs errors only, unless CORE_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("CORE_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// claimThenPreBind creates a claim, waits until the core has seen it, then
// creates addresses pre-bound to it: the order the operating procedures
// prescribe (an address whose claim does not exist yet is reclaimed at once).
func claimThenPreBind(g Gomega, claim *v1alpha1.IPAddressClaim, addrs ...*v1alpha1.IPAddress) {
	kit.Create(g, claim)
	g.Eventually(func() []string { return kit.Finalizers(g, claim) }, timeout, tick).Should(ContainElement(v1alpha1.FinalizerClaimProtection))
	for _, a := range addrs {
		b.PreBound(claim.Namespace, claim.Name)(a)
		kit.Create(g, a)
	}
}
