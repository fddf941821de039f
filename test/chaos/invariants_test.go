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

package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// reporting returns a Service of ns whose load balancer reports ips.
func reporting(ns, name string, ips []string, opts ...b.ServiceOption) *corev1.Service {
	s := b.Service(ns, name, opts...)
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return s
}

// keyed sets MetalLB's sharing key on a Service and, when byDriver, the
// driver's record that it wrote that key.
//
//nolint:unparam // The key stays in every case, so that a reader sees which Services share one.
func keyed(key string, byDriver bool) b.ServiceOption {
	return func(s *corev1.Service) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, annotationAllowSharedIP, key)
		if byDriver {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, annotationSharingKey, key)
		}
	}
}

// bound returns a claim Bound to ips.
//
//nolint:unparam // ns mirrors reporting and b.BoundTo, so that a case shows which claim a Service or address names.
func bound(ns, name string, uid types.UID, ips ...string) *v1alpha1.IPAddressClaim {
	c := b.Claim(ns, name)
	c.UID = uid
	c.Status.Phase = v1alpha1.ClaimBound
	for _, ip := range ips {
		c.Status.Addresses = append(c.Status.Addresses, v1alpha1.ClaimedAddress{Name: "ip-" + ip, Address: ip})
	}
	return c
}

// TestCheckerCatchesEachViolation feeds the checker the object sequences
// each invariant forbids, and the ones it allows, and reads its verdicts.
func TestCheckerCatchesEachViolation(t *testing.T) {
	cases := []struct {
		name string
		feed func(c *checker)
		want string // the invariant violated, "" for none
	}{
		{"two Services without a key report one IP", func(c *checker) {
			c.onService(reporting("t", "a", []string{"10.210.0.1"}), false)
			c.onService(reporting("t", "b", []string{"10.210.0.1"}), false)
		}, invTwoServices},
		{"a hold and its carrier share the driver's key", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"10.210.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"10.210.0.1"}, keyed("k1", true)), false)
		}, ""},
		{"a workload with a key the driver did not write", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"10.210.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"10.210.0.1"}, keyed("k1", false)), false)
		}, invTwoServices},
		{"an allocation placeholder giving the address back", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "alloc", []string{"fd00:210::1"},
				b.WithLabel(labelWithdrawn, "mark")), false)
			c.onService(reporting("t", "a", []string{"fd00:210:0::1"}), false)
		}, ""},
		{"a Service gone before the next reports the IP", func(c *checker) {
			c.onService(reporting("t", "a", []string{"10.210.0.1"}), false)
			c.onService(reporting("t", "a", nil), true)
			c.onService(reporting("t", "b", []string{"10.210.0.1"}), false)
		}, ""},
		{"a Bound claim's address changes", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "10.210.0.1"), false)
			c.onClaim(bound("t", "c", "u1", "10.210.0.2"), false)
		}, invClaimChanged},
		{"a Bound claim goes Lost", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "10.210.0.1"), false)
			lost := bound("t", "c", "u1")
			lost.Status.Phase = v1alpha1.ClaimLost
			c.onClaim(lost, false)
		}, invClaimLeft},
		{"a claim being deleted may let go", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "10.210.0.1"), false)
			deleting := bound("t", "c", "u1")
			deleting.DeletionTimestamp = &metav1.Time{}
			c.onClaim(deleting, false)
			c.onClaim(bound("t", "d", "u2", "10.210.0.1"), false)
		}, ""},
		{"two live claims report one address", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "10.210.0.1"), false)
			c.onClaim(bound("t", "d", "u2", "10.210.0.1"), false)
		}, invTwoClaims},
		{"two IPAddresses bind one IP to two claims", func(c *checker) {
			c.onAddress(b.Address("x", "10.212.0.1", "s", b.BoundTo("t", "c", "u1")), false)
			c.onAddress(b.Address("y", "10.212.0.1", "s", b.BoundTo("t", "d", "u2")), false)
		}, invTwoClaims},
		{"an IPAddress moves to another claim", func(c *checker) {
			c.onAddress(b.Address("x", "10.212.0.1", "s", b.BoundTo("t", "c", "u1")), false)
			c.onAddress(b.Address("x", "10.212.0.1", "s", b.BoundTo("t", "c", "u2")), false)
		}, invRebound},
		{"a placeholder holds an unrecorded IP at the end", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "alloc", []string{"10.210.0.9"}), false)
			c.finalCheck()
		}, invUnrecordedEnd},
		{"a placeholder holds a recorded IP at the end", func(c *checker) {
			c.onAddress(b.Address("x", "10.210.0.9", "m"), false)
			c.onService(reporting(placeholderNamespace, "hold", []string{"10.210.0.9"}), false)
			c.finalCheck()
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker()
			tc.feed(c)
			got, _ := c.result()
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("violations %+v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Invariant != tc.want):
				t.Errorf("violations %+v, want exactly one of %q", got, tc.want)
			}
		})
	}
}

// TestProgressConvergesOnlyWhenEverythingIsInPlace reads the convergence
// verdict on a Service that carries its claim's address, one that does not,
// and a stray.
func TestProgressConvergesOnlyWhenEverythingIsInPlace(t *testing.T) {
	c := newChecker()
	c.onClaim(bound("t", "c", "u1", "10.210.0.1"), false)
	c.onService(reporting("t", "a", []string{"10.210.0.1"}, b.ForClaim("c")), false)
	if p := c.progress(); !p.converged() {
		t.Fatalf("not converged: %s", p)
	}
	c.onService(reporting("t", "b", nil, b.ForClaim("c")), false)
	if p := c.progress(); p.converged() || p.Carriers != 2 || p.Carrying != 1 {
		t.Errorf("a second Service naming the claim without its address: %s, want 1/2 carrying", p)
	}
	c.onService(reporting("t", "b", nil), true)
	terminating := reporting("t", "a", []string{"10.210.0.1"}, b.ForClaim("c"))
	terminating.DeletionTimestamp = &metav1.Time{}
	c.onService(terminating, false)
	if p := c.progress(); p.converged() || p.ServicesDeleting != 1 {
		t.Errorf("a Service stuck being deleted: %s, want 1 still being deleted", p)
	}
	c.onService(terminating, true)
	c.onService(reporting("t", "stray", []string{"10.211.0.4"}), false)
	if p := c.progress(); p.converged() || p.Stray != 1 || !strings.Contains(p.String(), "t/stray") {
		t.Errorf("a Service naming no claim with a pool address: %s, want 1 stray", p)
	}
}
