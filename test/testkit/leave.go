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

package testkit

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// LeaveNothing removes, once the test is over, what it made in namespace ns
// and of class: the claims and Services in ns, the class's addresses, the
// class and the namespace, waiting until each is gone, at most within per
// object. The managers let go of them (the driver tears the addresses'
// holds down, the core lets the class go): registered after they start, it
// runs before they stop.
func (k *Kit) LeaveNothing(t *testing.T, ns, class string, within time.Duration) {
	t.Helper()
	t.Cleanup(func() {
		g := NewWithT(t)
		ctx := context.Background()
		in := client.InNamespace(ns)
		g.Expect(k.DeleteAllOf(ctx, &v1alpha1.IPAddressClaim{}, in)).To(Succeed())
		g.Expect(k.DeleteAllOf(ctx, &corev1.Service{}, in)).To(Succeed())
		addrs := &v1alpha1.IPAddressList{}
		g.Expect(k.List(ctx, addrs)).To(Succeed())
		for i := range addrs.Items {
			if a := &addrs.Items[i]; a.Spec.ClassName == class {
				g.Expect(client.IgnoreNotFound(k.Delete(ctx, a))).To(Succeed())
				g.Eventually(k.Gone(a), within, 100*time.Millisecond).Should(BeTrue(), "IPAddress %s", a.Name)
			}
		}
		cl := &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: class}}
		g.Expect(client.IgnoreNotFound(k.Delete(ctx, cl))).To(Succeed())
		g.Eventually(k.Gone(cl), within, 100*time.Millisecond).Should(BeTrue(), "IPAddressClass %s", class)
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		g.Expect(client.IgnoreNotFound(k.Delete(ctx, n))).To(Succeed())
		g.Eventually(k.Gone(n), within, 100*time.Millisecond).Should(BeTrue(), "namespace %s", ns)
	})
}
