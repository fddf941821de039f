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
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
)

// provisioner names a driver that is not running: these tests exercise the
// core alone, so nothing is ever provisioned.
const provisioner = "example.drivers.local.sdn.cozystack.io"

var (
	testCluster *cluster.Cluster
	k8s         client.Client
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
	mgr, err := ctrl.NewManager(testCluster.Config, ctrl.Options{
		Scheme:                 manager.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1, Clock: clk}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var stopped atomic.Bool
	stop := func() {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("core manager: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return clk, stop
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// testName turns the test's name into a short object name, unique per run.
func testName(t *testing.T) string {
	base := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = base[len(base)-40:]
	}
	return strings.Trim(base, "-") + "-" + rand.String(4)
}

// namespace creates a namespace for the test.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testName(t)}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(g Gomega, objs ...client.Object) {
	for _, o := range objs {
		g.Expect(k8s.Create(context.Background(), o)).To(Succeed(), "creating %s", o.GetName())
	}
}

func claimOf(g Gomega, ns, name string) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c
}

func addressOf(g Gomega, name string) *v1alpha1.IPAddress {
	a := &v1alpha1.IPAddress{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: name}, a)).To(Succeed())
	return a
}

func gone(obj client.Object) func() bool {
	return func() bool {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err)
	}
}

// claimState is what a test waits for on a claim: phase, Bound reason and
// addresses.
type claimState struct {
	Phase     v1alpha1.IPAddressClaimPhase
	Reason    string
	Addresses []string
}

func stateOfClaim(g Gomega, ns, name string) func() claimState {
	return func() claimState {
		c := claimOf(g, ns, name)
		s := claimState{Phase: c.Status.Phase}
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionBound); cond != nil {
			s.Reason = cond.Reason
		}
		for _, a := range c.Status.Addresses {
			s.Addresses = append(s.Addresses, a.Name)
		}
		return s
	}
}

func reasonOf(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.Reason
	}
	return ""
}

// addressState is what a test waits for on an address.
type addressState struct {
	Phase  v1alpha1.IPAddressPhase
	Reason string
	Claim  string
}

func stateOfAddress(g Gomega, name string) func() addressState {
	return func() addressState {
		a := addressOf(g, name)
		s := addressState{Phase: a.Status.Phase, Reason: reasonOf(a.Status.Conditions, v1alpha1.ConditionBound)}
		if a.Spec.ClaimRef != nil {
			s.Claim = a.Spec.ClaimRef.Key()
		}
		return s
	}
}

// eventsAbout returns the notes of the events with reason about the object.
func eventsAbout(g Gomega, obj client.Object, reason string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(context.Background(), list)).To(Succeed())
		var notes []string
		for _, e := range list.Items {
			if e.Regarding.UID == obj.GetUID() && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		return notes
	}
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

// setAnnotation sets (or, with an empty value, removes) an annotation.
func setAnnotation(g Gomega, obj client.Object, key, value string) {
	g.Eventually(func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if value == "" {
			delete(ann, key)
		} else {
			ann[key] = value
		}
		obj.SetAnnotations(ann)
		return k8s.Update(context.Background(), obj)
	}, timeout, tick).Should(Succeed())
}

// claimThenPreBind creates a claim, waits until the core has seen it, then
// creates addresses pre-bound to it: the order the operating procedures
// prescribe (an address whose claim does not exist yet is reclaimed at once).
func claimThenPreBind(g Gomega, claim *v1alpha1.IPAddressClaim, addrs ...*v1alpha1.IPAddress) {
	create(g, claim)
	g.Eventually(func() []string { return getFinalizers(g, claim) }, timeout, tick).Should(ContainElement(v1alpha1.FinalizerClaimProtection))
	for _, a := range addrs {
		b.PreBound(claim.Namespace, claim.Name)(a)
		create(g, a)
	}
}
