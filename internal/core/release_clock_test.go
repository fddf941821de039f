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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// driverSetsPhase writes an address's phase the way a driver does when it
// raises or clears a Conflict: through the status subresource, with an
// optimistic lock, stamping the phase's transition time.
func driverSetsPhase(g Gomega, name string, phase v1alpha1.IPAddressPhase, conflict metav1.ConditionStatus, at time.Time) {
	g.Eventually(func() error {
		a := kit.Address(g, name)
		orig := a.DeepCopy()
		a.Status.Phase, a.Status.LastPhaseTransitionTime = phase, &metav1.Time{Time: at}
		meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionConflict, Status: conflict,
			Reason: "Test", Message: "set by the test in the driver's place", LastTransitionTime: metav1.Time{Time: at}})
		return k8s.Status().Patch(context.Background(), a, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	}, timeout, tick).Should(Succeed())
}

// TestAConflictDoesNotRestartTheReleaseDelay: a Released address goes into
// Conflict and back; the releaseDelay still counts from its release. It
// moves its core's clock, so it runs serially on a core of its own.
func TestAConflictDoesNotRestartTheReleaseDelay(t *testing.T) {
	g := NewWithT(t)
	clk, _ := startCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	name := class + "-a"
	kit.Make(t, g, b.Class(class, provisioner, b.ReleaseDelay(time.Hour)))
	releaseAddress(t, g, ns, class, name, "198.18.41.1")

	clk.advance(50 * time.Minute)
	driverSetsPhase(g, name, v1alpha1.AddressConflict, metav1.ConditionTrue, clk.Now())
	g.Consistently(kit.StateOfAddress(g, name), time.Second, 100*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressConflict),
		"Conflict belongs to the driver")

	clk.advance(5 * time.Minute)
	handedBack := clk.Now()
	driverSetsPhase(g, name, v1alpha1.AddressBound, metav1.ConditionFalse, handedBack)
	g.Eventually(kit.StateOfAddress(g, name), timeout, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressReleased, Reason: v1alpha1.ReasonReleased, Claim: ns + "/" + name}))
	g.Expect(kit.Address(g, name).Status.LastPhaseTransitionTime.Time).To(BeTemporally(">=", handedBack.Truncate(time.Second)),
		"the phase moved, through Conflict and back")

	// 65 minutes after the release, 10 after the hand-back: due.
	clk.advance(10 * time.Minute)
	kit.SetAnnotation(g, kit.Address(g, name), "test/nudge", "1")
	g.Eventually(kit.StateOfAddress(g, name), 5*time.Second, tick).Should(Equal(testkit.AddressState{
		Phase: v1alpha1.AddressAvailable, Reason: v1alpha1.ReasonAvailable}))
	g.Expect(meta.FindStatusCondition(kit.Address(g, name).Status.Conditions, v1alpha1.ConditionReleased)).To(BeNil(),
		"an Available address is no longer Released")
}
