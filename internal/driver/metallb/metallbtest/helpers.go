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
	. "github.com/onsi/gomega"

	b "github.com/cozystack/address-controller/test/builder"

	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/test/testkit"
)

// ClassCondition reads a class's Rendered condition as "Status Reason: message".
func ClassCondition(g Gomega, name string) func() string {
	return func() string {
		c := &v1alpha1.IPAddressClass{}
		g.Expect(Client.Get(context.Background(), client.ObjectKey{Name: name}, c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionRendered)
		if cond == nil {
			return ""
		}
		return string(cond.Status) + " " + cond.Reason + ": " + cond.Message
	}
}

// Dashed writes an IP with dashes for its dots and colons, as object names
// carry it.
func Dashed(ip string) string {
	out := []byte(ip)
	for i, c := range out {
		if c == '.' || c == ':' {
			out[i] = '-'
		}
	}
	return string(out)
}

// AllocationsOf lists the allocation placeholders of a claim.
func AllocationsOf(g Gomega, claim *v1alpha1.IPAddressClaim) func() []string {
	return func() []string {
		list := &corev1.ServiceList{}
		g.Expect(Client.List(context.Background(), list, client.InNamespace(PlaceholderNS),
			client.MatchingLabels{v1alpha1.LabelClaimUID: string(claim.UID), v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation})).To(Succeed())
		var out []string
		for _, s := range list.Items {
			if s.DeletionTimestamp == nil {
				out = append(out, s.Name+"@"+s.Labels[v1alpha1.LabelClass])
			}
		}
		return out
	}
}

// AddressIsFree proves MetalLB released ip: a Service pinned to it gets it.
func AddressIsFree(g Gomega, ns, ip string) {
	probe := b.Service(ns, "probe-"+Dashed(ip), b.PinnedByHand(ip))
	Kit.Create(g, probe)
	g.Eventually(IngressOf(g, ns, probe.Name), Timeout, Tick).Should(Equal([]string{ip}))
	g.Expect(Client.Delete(context.Background(), probe)).To(Succeed())
}

// AllocationPlaceholder is the IPv4 allocation placeholder the driver makes
// for claim of class, built by hand while the driver is not running.
func AllocationPlaceholder(claim *v1alpha1.IPAddressClaim, class string) *corev1.Service {
	ph := b.Service(PlaceholderNS, "alloc-"+string(claim.UID)+"-v4")
	ph.Spec.Selector = nil
	ph.Labels = map[string]string{v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation, v1alpha1.LabelClaimUID: string(claim.UID),
		v1alpha1.LabelClass: class, v1alpha1.LabelFamily: string(v1alpha1.IPv4)}
	ph.Annotations = map[string]string{"metallb.io/address-pool": params.PoolName(class),
		v1alpha1.AnnotationClaim: claim.Namespace + "/" + claim.Name}
	return ph
}

// ServiceEvents lists the reasons and messages of the events about Service
// name in ns.
func ServiceEvents(g Gomega, ns, name string) []string {
	list := &corev1.EventList{}
	g.Expect(Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Service" && e.InvolvedObject.Name == name {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// SetParameters replaces a class's parameters, reading it again after a
// conflict: the managers write the class too (its finalizer).
func SetParameters(g Gomega, class, parameters string) {
	g.Eventually(func() error {
		c := &v1alpha1.IPAddressClass{}
		if err := Client.Get(context.Background(), client.ObjectKey{Name: class}, c); err != nil {
			return err
		}
		c.Spec.Parameters = b.Class("", "", b.Parameters(parameters)).Spec.Parameters
		return Client.Update(context.Background(), c)
	}, Timeout, Tick).Should(Succeed(), "class %s takes parameters %s", class, parameters)
}

// WatchIPs watches every Service of the cluster for the IPs given until the
// test ends.
func WatchIPs(t *testing.T, g Gomega, ips ...string) *testkit.IPWatcher {
	return testkit.WatchIPs(t, g, Cluster.Config, ips...)
}
