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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// pinnedFor pins a Service as the Cilium driver does: the pin and the
// driver's marker to ips, and the pool label of class.
func pinnedFor(class string, ips ...string) b.ServiceOption {
	return func(s *corev1.Service) {
		value := strings.Join(ips, ",")
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, "lbipam.cilium.io/ips", value)
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.AnnotationPinnedBy, value)
		metav1.SetMetaDataLabel(&s.ObjectMeta, ciliumBackend.poolLabel, class)
	}
}

// TestCiliumChecksCatchEachViolation feeds a checker of a Cilium run the
// sequences its Cilium-specific invariants forbid and the ones they allow,
// and the sharing rule read from LB-IPAM's sharing key.
func TestCiliumChecksCatchEachViolation(t *testing.T) {
	ns := ciliumBackend.placeholderNamespace
	ciliumKeyed := func(key string, byDriver bool) b.ServiceOption {
		return func(s *corev1.Service) {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, ciliumBackend.sharingKey, key)
			if byDriver {
				metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.AnnotationSharedBy, key)
			}
		}
	}
	cases := []struct {
		name string
		feed func(c *checker, after func(time.Duration))
		want string // the invariant violated, "" for none
	}{
		{"a carrier pinned with its class's pool label", func(c *checker, after func(time.Duration)) {
			c.onAddress(b.Address("ip-100-80-0-1", "100.80.0.1", classDelete), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, withUID("s1"), pinnedFor(classDelete, "100.80.0.1")), false)
			after(time.Hour)
		}, ""},
		{"a former carrier unpinned but still labelled for the pool", func(c *checker, _ func(time.Duration)) {
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, withUID("s1"), markedWithdrawn(),
				b.WithLabel(ciliumBackend.poolLabel, classDelete)), false)
		}, invPoolUnpinned},
		{"an allocation placeholder labelled for the pool before its pin", func(c *checker, after func(time.Duration)) {
			c.onService(reporting(ns, "alloc", nil, withUID("p1"), b.WithLabel(ciliumBackend.poolLabel, classDelete)), false)
			after(time.Hour)
		}, ""},
		{"a pinned Service labelled for another class's pool", func(c *checker, after func(time.Duration)) {
			c.onAddress(b.Address("ip-100-80-0-1", "100.80.0.1", classDelete), false)
			c.onService(reporting("t", "a", nil, withUID("s1"), pinnedFor(classRetain, "100.80.0.1")), false)
			after(watchLag)
		}, invWrongPool},
		{"a pin seen before its IPAddress, within the watches' lag", func(c *checker, after func(time.Duration)) {
			c.onService(reporting("t", "a", nil, withUID("s1"), pinnedFor(classRetain, "100.80.0.1")), false)
			after(time.Second)
			c.onAddress(b.Address("ip-100-80-0-1", "100.80.0.1", classRetain), false)
			after(time.Hour)
		}, ""},
		{"a hold and its carrier share LB-IPAM's key", func(c *checker, _ func(time.Duration)) {
			c.onService(reporting(ns, "hold", []string{"100.80.0.1"}, ciliumKeyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, ciliumKeyed("k1", true)), false)
		}, ""},
		{"MetalLB's key means nothing to a Cilium run", func(c *checker, _ func(time.Duration)) {
			c.onService(reporting(ns, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, keyed("k1", true)), false)
		}, invTwoServices},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, after := clocked()
			c.b = ciliumBackend
			tc.feed(c, after)
			// The bare IPAddresses break the hold and phase rules too; only
			// the rules under test are read.
			all, _ := c.result()
			got := slices.DeleteFunc(all, func(v Violation) bool {
				return !slices.Contains([]string{invPoolUnpinned, invWrongPool, invTwoServices}, v.Invariant)
			})
			wantViolation(t, got, tc.want)
		})
	}
}

// TestLabelValueMatchesTheDrivers pins the pool label's value for a class
// name too long for a label to the driver's (placeholder.LabelValue).
func TestLabelValueMatchesTheDrivers(t *testing.T) {
	long := strings.Repeat("c", 64)
	for name, want := range map[string]string{
		classDelete: classDelete,
		long:        "h-52b6419d27bd7f547cee",
	} {
		if got := labelValue(name); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", name, got, want)
		}
	}
}
