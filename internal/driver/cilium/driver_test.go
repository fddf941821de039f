//go:build cilium

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

package cilium_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/core"
	"github.com/cozystack/address-controller/internal/driver/cilium"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
	"github.com/cozystack/address-controller/test/testkit"
)

// These tests cover what the contract suite does not: how a class's bad
// input is reported.

// startBoth runs the core and the Cilium driver in the test process until t
// ends.
func startBoth(t *testing.T) {
	err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placeholderNS}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	inprocess.Start(t, testCluster.Config, func(mgr ctrl.Manager) error {
		return core.Setup(mgr, core.Options{ClaimConcurrency: 4, AddressConcurrency: 4, ClassConcurrency: 1})
	})
	contractHarness{}.StartDriver(t, testCluster.Config)
}

// ciliumClass creates a class of the driver over a fresh IPv4 /28 and IPv6
// /124 and waits until it is rendered.
func ciliumClass(t *testing.T, g Gomega) string {
	name := testkit.Name(t)
	v4, v6 := contractHarness{}.Ranges()
	kit.Make(t, g, b.Class(name, v1alpha1.ProvisionerCilium, b.Parameters(contractHarness{}.Parameters(v4, v6))))
	g.Eventually(rendered(g, name), timeout, tick).Should(HaveField("Reason", HavePrefix("Rendered")))
	return name
}

// rendered reads a class's Rendered condition.
func rendered(g Gomega, class string) func() metav1.Condition {
	return func() metav1.Condition {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: class}, c)).To(Succeed())
		cond := testkit.Condition(c.Status.Conditions, v1alpha1.ConditionRendered)
		return metav1.Condition{Status: cond.Status, Reason: cond.Reason, Message: cond.Message}
	}
}

// TestBadClassesSaySo: parameters the driver cannot read, and ranges
// LB-IPAM finds in conflict with another class's, are reported on the class.
func TestBadClassesSaySo(t *testing.T) {
	startBoth(t)
	g := NewWithT(t)
	for params, want := range map[string]string{
		`{"addresses": []}`:                            "parameters.addresses is required",
		`{"addresses": ["198.51.100.1/24"]}`:           `parameters.addresses[0]: "198.51.100.1/24" has host bits set`,
		`{"ranges": ["198.51.100.0/28"]}`:              "parameters.ranges: unknown field",
		`{"addresses": ["198.51.100.9-198.51.100.1"]}`: `parameters.addresses[0]: "198.51.100.9-198.51.100.1" is backwards`,
	} {
		name := testkit.Name(t) + fmt.Sprintf("-%d", nextRange.Add(1))
		kit.Make(t, g, b.Class(name, v1alpha1.ProvisionerCilium, b.Parameters(params)))
		g.Eventually(rendered(g, name), timeout, tick).Should(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", cilium.ReasonInvalidParameters), HaveField("Message", ContainSubstring(want))), params)
	}

	first := ciliumClass(t, g)
	c := &v1alpha1.IPAddressClass{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Name: first}, c)).To(Succeed())
	// LB-IPAM disables the newer of two conflicting pools, by creation time
	// in whole seconds (at a tie, either): the second class comes a second
	// later.
	time.Sleep(1100 * time.Millisecond)
	second := first + "-overlapping"
	kit.Make(t, g, b.Class(second, v1alpha1.ProvisionerCilium, b.Parameters(string(c.Spec.Parameters.Raw))))
	g.Eventually(rendered(g, second), timeout, tick).Should(And(HaveField("Reason", cilium.ReasonPoolConflict),
		HaveField("Message", ContainSubstring("in conflict"))))
	g.Consistently(rendered(g, first), settle, tick).Should(HaveField("Reason", HavePrefix("Rendered")))
}
