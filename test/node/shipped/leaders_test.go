//go:build node

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

package shipped_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/e2e/harness"
)

// testLeadersDeletedMidHandoff installs the core's and the MetalLB
// driver's charts with two replicas each (one per node), walks the
// flagship flow up to the client's answer from Service A, then deletes A,
// creates B, and deletes both managers' leader Pods (found from their
// leader election Leases) while that handoff is in progress. Nothing is
// lost: a watch on the claim sees it Bound to its one address throughout,
// the IPAddress is the same object, B gets the address and the client
// reaches B's Pod, another Pod holds each Lease, and each Deployment is
// back to two Available replicas.
//
// Artefacts: address-controller and metallb-iad as in testHandoff, with the
// values replicas=2 and leaderElection (default true: deployment.yaml's
// --leader-elect and --leader-election-namespace, the Lease named by the
// binary's default --leader-election-id in the release namespace, the
// leader election Role in rbac/*), podAntiAffinity (default "soft": the
// replicas on distinct nodes) and deployment.yaml's
// terminationGracePeriodSeconds (the deleted leader lets its Lease go as it
// stops).
func testLeadersDeletedMidHandoff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	installManager(t, g, harness.Core, harness.CoreNamespace, coreImage, "replicas=2")
	installManager(t, g, harness.Driver, harness.DriverNamespace, driverImage, "replicas=2")
	f := claimAndServe(t, g)

	claim := kit.Claim(g, f.ns, "web")
	address := kit.Address(g, claim.Status.Addresses[0].Name)
	claims := watchClaims(g, f.ns)
	coreLeader := leader(ctx, g, harness.Core, harness.CoreNamespace)
	driverLeader := leader(ctx, g, harness.Driver, harness.DriverNamespace)
	t.Logf("Leaders: %s, %s", coreLeader, driverLeader)

	g.Expect(cs.CoreV1().Services(f.ns).Delete(ctx, "a", metav1.DeleteOptions{})).To(Succeed())
	createB(g, f)
	// The handoff has not ended when the leaders go: B does not report the
	// address yet.
	g.Expect(kit.Ingress(g, f.ns, "b")()).To(BeEmpty(), "the handoff ended before the leaders were deleted")
	if a, err := cs.CoreV1().Services(f.ns).Get(ctx, "a", metav1.GetOptions{}); err == nil {
		t.Logf("Deleting the leaders while A is still held by %v", a.Finalizers)
	} else {
		t.Logf("Deleting the leaders after A is gone (%v)", err)
	}
	deleted := time.Now()
	g.Expect(cs.CoreV1().Pods(harness.DriverNamespace).Delete(ctx, driverLeader, metav1.DeleteOptions{})).To(Succeed())
	g.Expect(cs.CoreV1().Pods(harness.CoreNamespace).Delete(ctx, coreLeader, metav1.DeleteOptions{})).To(Succeed())

	reachB(t, g, f)
	t.Logf("The client reached Service B %s after the leaders' Pods were deleted", time.Since(deleted).Round(time.Millisecond))
	for _, l := range []struct {
		m         harness.Manager
		namespace string
		was       string
	}{{harness.Core, harness.CoreNamespace, coreLeader}, {harness.Driver, harness.DriverNamespace, driverLeader}} {
		g.Eventually(func(g Gomega) {
			now := leader(ctx, g, l.m, l.namespace)
			g.Expect(now).NotTo(Equal(l.was), "the deleted Pod still holds the Lease")
			_, err := cs.CoreV1().Pods(l.namespace).Get(ctx, now, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "the Lease's holder is no Pod of the release")
			dep, err := cs.AppsV1().Deployments(l.namespace).Get(ctx, string(l.m), metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(available(dep)).To(BeTrue(), "the Deployment is not Available: %+v", dep.Status)
			g.Expect(dep.Status.AvailableReplicas).To(BeNumerically("==", 2))
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return diagnose(ctx, l.namespace) })
		t.Logf("The %s Lease is held by %s", l.m, leader(ctx, g, l.m, l.namespace))
	}

	claims().kept(g, map[string]string{"web": f.address})
	g.Expect(kit.Address(g, address.Name).UID).To(Equal(address.UID), "the IPAddress was made again")
	g.Expect(kit.StateOfAddress(g, address.Name)()).To(HaveField("Phase", v1alpha1.AddressBound))
}

// leader is the Pod that holds manager m's leader election Lease in
// namespace: the Lease is named by the binary's default --leader-election-id
// (<manager>.local.sdn.cozystack.io; the charts leave it), and its holder is
// controller-runtime's identity, the Pod's name (its hostname), "_" and a
// UUID.
func leader(ctx context.Context, g Gomega, m harness.Manager, namespace string) string {
	lease, err := cs.CoordinationV1().Leases(namespace).Get(ctx, string(m)+".local.sdn.cozystack.io", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil(), "the Lease has no holder")
	pod, _, found := strings.Cut(*lease.Spec.HolderIdentity, "_")
	g.Expect(found).To(BeTrue(), "the Lease's holder %q is no Pod's identity", *lease.Spec.HolderIdentity)
	return pod
}
