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
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestAClaimAskedWhileMetalLBCatchesUpIsAskedForAtOnce: while MetalLB
// ignores single Service events the driver changes no Service, but it
// creates a new claim's allocation placeholder at once, marked as asked
// then: a new Service fails no full pass, and the next pass that lists it
// assigns it. The claim binds once MetalLB handles single events again,
// with no mark left on what holds its address. A placeholder no pass could
// assign (its pool is full) loses its mark then, a write MetalLB handles,
// and gets the address once one is free.
func TestAClaimAskedWhileMetalLBCatchesUpIsAskedForAtOnce(t *testing.T) {
	mt.StartCore(t)
	mt.StartDriverOpts(t, driver.HandoffAuto, trust, false)
	g := NewWithT(t)
	ctx := context.Background()
	ns, class, v4, _ := mt.ClaimedAndHeld(t, g)
	full := oneAddressClass(t, g)
	mt.Kit.Create(g, b.Claim(ns, "first", b.OfClass(full)))
	mt.BoundAddress(g, ns, "first")

	lift := ignoringSingleEvents(t, g, ns, strings.TrimSuffix(v4, "0/28")+"14")
	time.Sleep(2 * trust) // the driver's last word from MetalLB is older than it trusts one
	mt.Kit.Create(g, b.Claim(ns, "asked", b.OfClass(class)))
	mt.Kit.Create(g, b.Claim(ns, "waits", b.OfClass(full)))
	asked := allocationOf(g, ns, "asked")
	waits := allocationOf(g, ns, "waits")
	for _, name := range []string{asked, waits} {
		g.Eventually(retryMark(g, name), mt.Timeout, mt.Tick).Should(Equal(v1alpha1.RetryAskedWhileCatchingUp),
			"the request is made at once, marked")
	}
	g.Eventually(questionOut(g), mt.Timeout, mt.Tick).Should(BeTrue())
	nudge := unrelatedPool(t, g) // a full pass at once, which fails again
	g.Eventually(mt.IngressOf(g, mt.PlaceholderNS, asked), mt.Timeout, mt.Tick).Should(ConsistOf(BeElementOf(hostsOf(v4))),
		"a full pass assigns the request, failing or not")
	g.Consistently(mt.Kit.StateOfClaim(g, ns, "asked"), 3*time.Second, mt.Tick).ShouldNot(HaveField("Phase", v1alpha1.ClaimBound),
		"the pin waits for MetalLB to handle single events")
	g.Expect(retryMark(g, asked)()).To(Equal(v1alpha1.RetryAskedWhileCatchingUp))
	g.Expect(mt.IngressOf(g, mt.PlaceholderNS, waits)()).To(BeEmpty())

	// MetalLB's next pass succeeds: the request made meanwhile binds, and
	// the one its full pool left waiting is touched and waits unmarked.
	lift()
	orig := nudge.DeepCopy()
	g.Expect(unstructured.SetNestedField(nudge.Object, true, "spec", "avoidBuggyIPs")).To(Succeed())
	g.Expect(mt.Client.Patch(ctx, nudge, client.MergeFrom(orig))).To(Succeed())
	addr := mt.BoundAddress(g, ns, "asked")
	g.Expect(mt.Placeholders(g, addr.Name)()).To(HaveLen(1))
	for _, name := range mt.Placeholders(g, addr.Name)() {
		g.Expect(retryMark(g, name)()).NotTo(Equal(v1alpha1.RetryAskedWhileCatchingUp))
	}
	g.Eventually(retryMark(g, waits), mt.Timeout, mt.Tick).Should(BeEmpty())
	g.Expect(mt.Client.Delete(ctx, mt.Kit.Claim(g, ns, "first"))).To(Succeed())
	mt.BoundAddress(g, ns, "waits")
}

// oneAddressClass creates a class over a single fresh IPv4 address,
// removed when the test ends, and waits until it is rendered.
func oneAddressClass(t *testing.T, g Gomega) string {
	v4, _ := mt.FreshRange()
	name := testkit.Name(t) + "-one"
	class := b.Class(name, mt.Provisioner, b.ClassReclaim(v1alpha1.ReclaimDelete),
		b.Parameters(fmt.Sprintf(`{"addresses": [%q]}`, strings.TrimSuffix(v4, "0/28")+"1/32")))
	mt.Kit.Own(t, class)
	mt.Kit.Create(g, class)
	g.Eventually(func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(mt.Client.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		return testkit.Reason(c.Status.Conditions, v1alpha1.ConditionRendered)
	}, mt.Timeout, mt.Tick).Should(HavePrefix("Rendered"))
	return name
}

// allocationOf names the IPv4 allocation placeholder of claim ns/name.
func allocationOf(g Gomega, ns, name string) string {
	return placeholder.AllocationName(mt.Kit.Claim(g, ns, name).UID, v1alpha1.IPv4)
}

// retryMark reads the retry annotation of placeholder name ("" while it is
// not there, or has none).
func retryMark(g Gomega, name string) func() string {
	return func() string {
		svc := &corev1.Service{}
		if err := mt.Client.Get(context.Background(), client.ObjectKey{Namespace: mt.PlaceholderNS, Name: name}, svc); err != nil {
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			return ""
		}
		return svc.Annotations[v1alpha1.AnnotationRetry]
	}
}

// hostsOf lists the IPv4 addresses of a /28.
func hostsOf(cidr string) []string {
	base := strings.TrimSuffix(cidr, "0/28")
	out := make([]string, 16)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", base, i)
	}
	return out
}
