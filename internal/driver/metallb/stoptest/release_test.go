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
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestAReleaseMetalLBWouldIgnoreIsNotLost: after a start, MetalLB ignores
// the events of single Services until one full pass over all of them
// succeeds, so a hold deleted in that window stays allocated in MetalLB's
// books, to a Service that no longer exists. A Service pinned to its address
// afterwards, under no sharing key, is refused at first, but must get the
// address: the driver makes MetalLB let the phantom go.
func TestAReleaseMetalLBWouldIgnoreIsNotLost(t *testing.T) {
	mt.StartCore(t)
	running := mt.StartDriver(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns, class, v4, addr := mt.ClaimedAndHeld(t, g, b.ClassReclaim(v1alpha1.ReclaimDelete))
	hold := mt.Placeholders(g, addr.Name)()
	g.Expect(hold).To(HaveLen(1))
	lift := ignoringSingleEvents(t, g, ns, strings.TrimSuffix(v4, "0/28")+"14")
	pool := params.PoolName(class)

	// The driver stops the claim's release while MetalLB ignores single
	// events, so the hold is deleted behind its back: by hand, with the
	// driver down, and the address's driver finalizer with it.
	running.Stop()
	g.Expect(mt.Client.Delete(ctx, mt.Kit.Claim(g, ns, "web"))).To(Succeed())
	g.Expect(mt.Client.Delete(ctx, b.Service(mt.PlaceholderNS, hold[0]))).To(Succeed())
	g.Eventually(func() error {
		a := &v1alpha1.IPAddress{}
		if err := mt.Client.Get(ctx, client.ObjectKey{Name: addr.Name}, a); err != nil {
			return client.IgnoreNotFound(err)
		}
		orig := a.DeepCopy()
		a.Finalizers = slices.DeleteFunc(a.Finalizers, func(f string) bool { return strings.HasPrefix(f, mt.Provisioner) })
		return mt.Client.Patch(ctx, a, client.MergeFrom(orig))
	}, mt.Timeout, mt.Tick).Should(Succeed())
	g.Eventually(mt.Kit.Gone(&v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: addr.Name}}), mt.Timeout, mt.Tick).Should(BeTrue())
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, hold[0])), mt.Timeout, mt.Tick).Should(BeTrue())
	mt.StartDriver(t)

	// A Service pinned to the address under no sharing key is refused, in
	// MetalLB's next full pass, for the phantom.
	mt.Kit.Create(g, b.Service(ns, "after", b.PinnedByHand(addr.Address), b.Port(80)))
	nudge := unrelatedPool(t, g)
	g.Eventually(func() []string {
		return mt.ServiceEvents(g, ns, "after")
	}, mt.Timeout, mt.Tick).Should(ContainElement(ContainSubstring("address also in use by "+mt.PlaceholderNS+"/"+hold[0])),
		"MetalLB refuses it first, for the phantom")

	// Once MetalLB handles single events again, the driver makes it let the
	// phantom go, and the Service gets the address.
	lift()
	passAgain(g, nudge)
	g.Eventually(mt.IngressOf(g, ns, "after"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}), func() string {
		return fmt.Sprintf("MetalLB's word on it: %v", mt.ServiceEvents(g, ns, "after"))
	})
	g.Expect(metallbSeries(g, "metallb_allocator_addresses_in_use_total", "pool", pool)()).To(Equal(2.0), "the poison and the pinned Service")
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, hold[0])), mt.Timeout, mt.Tick).Should(BeTrue(), "the tombstone goes once MetalLB handled it")
}

// ignoringSingleEvents makes MetalLB ignore the events of single Services
// until lift is called: a Service pinned to spare whose status MetalLB may
// not write makes every full pass fail, and MetalLB starts again. It returns
// once a pass failed.
func ignoringSingleEvents(t *testing.T, g Gomega, ns, spare string) (lift func()) {
	ctx := context.Background()
	lift = unwritable(t, g, ns, "poison")
	mt.Kit.Create(g, b.Service(ns, "poison", b.ClusterIPOnly()))
	g.Eventually(func() error {
		return mt.Client.Status().Update(ctx, mt.Kit.Service(g, ns, "poison"))
	}, mt.Timeout, mt.Tick).Should(Satisfy(func(err error) bool { return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) }),
		"the policy is in force")
	poison := mt.Kit.Service(g, ns, "poison")
	orig := poison.DeepCopy()
	poison.Spec.Type = corev1.ServiceTypeLoadBalancer
	poison.Annotations = map[string]string{"metallb.io/loadBalancerIPs": spare}
	g.Expect(mt.Client.Patch(ctx, poison, client.MergeFrom(orig))).To(Succeed())

	failedPasses := metallbLogLines(g, "reprocessAll", "failed to handle service, retry", ns+"/poison")
	before := failedPasses()
	g.Expect(mt.Cluster.StopMetalLB()).To(Succeed())
	g.Expect(mt.Cluster.StartMetalLB()).To(Succeed())
	g.Eventually(failedPasses, mt.Timeout, mt.Tick).Should(BeNumerically(">", before))
	return lift
}

// unwritable denies, until lift is called or the test ends, every write of
// the status of Service name in ns, and deletes that Service when the test
// ends.
func unwritable(t *testing.T, g Gomega, ns, name string) (lift func()) {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: testkit.Name(t)},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
						Resources: []string{"services/status"}},
				},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.name != %q", name),
				Message:    "this test's Service status may not be written",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	mt.Kit.Create(g, policy, binding)
	drop := func() {
		_ = mt.Client.Delete(context.Background(), binding)
		_ = mt.Client.Delete(context.Background(), policy)
	}
	lift = func() {
		drop()
		g.Eventually(func() error {
			svc := &corev1.Service{}
			if err := mt.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
				return client.IgnoreNotFound(err)
			}
			return mt.Client.Status().Update(context.Background(), svc)
		}, mt.Timeout, mt.Tick).Should(Succeed(), "the policy is out of force")
	}
	// MetalLB starts afresh afterwards, so that the tests after this one
	// find it handling single events.
	t.Cleanup(func() {
		drop()
		_ = mt.Client.Delete(context.Background(), b.Service(ns, name))
		_ = mt.Cluster.StopMetalLB()
		_ = mt.Cluster.StartMetalLB()
	})
	return lift
}

// unrelatedPool creates a MetalLB address pool no class renders, which
// makes MetalLB reload its configuration and run a full pass.
func unrelatedPool(t *testing.T, g Gomega) *unstructured.Unstructured {
	v4, _ := mt.FreshRange()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(params.IPAddressPoolGVK)
	u.SetNamespace(cluster.MetalLBNamespace)
	u.SetName(testkit.Name(t))
	g.Expect(unstructured.SetNestedStringSlice(u.Object, []string{v4}, "spec", "addresses")).To(Succeed())
	g.Expect(unstructured.SetNestedField(u.Object, false, "spec", "autoAssign")).To(Succeed())
	mt.Kit.Create(g, u)
	t.Cleanup(func() { _ = mt.Client.Delete(context.Background(), u) })
	return u
}

// passAgain changes the pool unrelatedPool made, once, which makes MetalLB
// run a full pass at once.
func passAgain(g Gomega, nudge *unstructured.Unstructured) {
	orig := nudge.DeepCopy()
	g.Expect(unstructured.SetNestedField(nudge.Object, true, "spec", "avoidBuggyIPs")).To(Succeed())
	g.Expect(mt.Client.Patch(context.Background(), nudge, client.MergeFrom(orig))).To(Succeed())
}

// metallbSeries reads one series of the MetalLB controller's metrics, by
// one label; -1 while MetalLB does not report it.
func metallbSeries(g Gomega, metric, label, value string) func() float64 {
	return func() float64 {
		resp, err := http.Get(mt.Cluster.MetalLBMetricsURL())
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range families[metric].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
		}
		return -1
	}
}

// metallbLogLines counts the lines of the MetalLB controller's log that
// contain every one of parts.
func metallbLogLines(g Gomega, parts ...string) func() int {
	return func() int {
		log, err := os.ReadFile(mt.Cluster.MetalLBLog())
		g.Expect(err).NotTo(HaveOccurred())
		n := 0
		for line := range strings.Lines(string(log)) {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
				n++
			}
		}
		return n
	}
}

// TestAClaimWaitingBehindATombstoneAsksAgainWhenItGoes: MetalLB kept a
// phantom allocation under the name of a Pending claim's request, and the
// driver put a tombstone of that name in place. While the tombstone stands
// the claim waits; once MetalLB has let the address go and the tombstone is
// deleted, the claim asks MetalLB again and is provisioned.
func TestAClaimWaitingBehindATombstoneAsksAgainWhenItGoes(t *testing.T) {
	d, g, ns := startTrusting(t, driver.HandoffAuto)
	ctx := context.Background()
	class, _, _ := mt.Class(t, g, false)

	// The claim asks while MetalLB is down; its request is then replaced by
	// a tombstone of its name, as the phantom repair makes one, while the
	// driver is down too.
	_, name := pendingWithMetalLBDown(t, g, ns, class, "web")
	d.Stop()
	g.Expect(mt.Client.Delete(ctx, b.Service(mt.PlaceholderNS, name))).To(Succeed())
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, name)), mt.Timeout, mt.Tick).Should(BeTrue())
	tomb := b.Service(mt.PlaceholderNS, name, b.ClusterIPOnly())
	tomb.Labels = map[string]string{v1alpha1.LabelManagedBy: params.ManagedByValue, v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderTombstone}
	tomb.Annotations = map[string]string{"metallb.io/ip-allocated-from-pool": "phantom"}
	mt.Kit.Create(g, tomb)
	mt.StartDriver(t)
	g.Eventually(func() string {
		return mt.Kit.Service(g, mt.PlaceholderNS, name).Annotations[v1alpha1.AnnotationClaim]
	}, mt.Timeout, mt.Tick).Should(Equal(ns+"/web"), "the claim's pass found the tombstone and named itself on it")

	// MetalLB, back, lets the tombstone's address go; the tombstone goes,
	// and the claim asks again.
	g.Expect(mt.Cluster.StartMetalLB()).To(Succeed())
	g.Eventually(func() string {
		s := &corev1.Service{}
		if err := mt.Client.Get(ctx, client.ObjectKey{Namespace: mt.PlaceholderNS, Name: name}, s); err != nil {
			return err.Error()
		}
		return s.Labels[v1alpha1.LabelPlaceholder]
	}, mt.Timeout, mt.Tick).Should(BeElementOf(v1alpha1.PlaceholderAllocation, v1alpha1.PlaceholderHold),
		"the tombstone went and the claim asked again (its request becomes the address's hold once provisioned)")
	mt.BoundAddress(g, ns, "web")
}
