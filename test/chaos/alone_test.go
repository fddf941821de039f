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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	b "github.com/cozystack/address-controller/test/builder"
)

// plain is Service name of the tenants' namespace, reporting ips.
func plain(name string, ips ...string) corev1.Service {
	return *reporting(tenantNamespace, name, ips)
}

// dual is plain, dual-stack.
func dual(name string, ips ...string) corev1.Service {
	return *reporting(tenantNamespace, name, ips, b.DualStack())
}

func TestMetalLBAloneSettlesOnlyWhenEveryServiceHasItsOwnAddresses(t *testing.T) {
	deleting := plain("c", "100.80.0.3")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name     string
		services []corev1.Service
		settled  bool
	}{
		{"none", nil, true},
		{"each with its families", []corev1.Service{
			plain("a", "100.80.0.1"), dual("b", "100.80.8.1", "fd00:211::1"),
		}, true},
		{"one waiting", []corev1.Service{plain("a", "100.80.0.1"), plain("b")}, false},
		{"a dual-stack Service with one family", []corev1.Service{dual("b", "100.80.8.1")}, false},
		{"an address outside the pool", []corev1.Service{plain("a", "198.51.100.1")}, false},
		{"one address on two", []corev1.Service{
			plain("a", "100.80.0.1"), plain("b", "100.80.0.1"),
		}, false},
		{"one being deleted", []corev1.Service{plain("a", "100.80.0.1"), deleting}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, state := servicesSettled(tc.services); got != tc.settled {
				t.Errorf("settled = %v (%s), want %v", got, state, tc.settled)
			}
		})
	}
}
