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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/address-controller/internal/driver"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
)

// TestARefusalOfAServiceThatIsGoneMakesNoTombstone: MetalLB's refusals
// stay for an hour, and a driver that starts reads them all. One whose
// refused Service is gone (or is another by now) is moot: nothing waits for
// the address, so no tombstone is made for the placeholder it blames. The
// same refusal of a Service that still exists makes one.
func TestARefusalOfAServiceThatIsGoneMakesNoTombstone(t *testing.T) {
	_, g, ns := startTrusting(t, driver.HandoffAuto)
	buried := tombstonesMade(t, g)
	refuse := func(svc corev1.ObjectReference, blamed string) {
		mt.Kit.Create(g, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: svc.Name + "." + blamed},
			InvolvedObject: svc,
			Reason:         "AllocationFailed",
			Type:           corev1.EventTypeWarning,
			Message: fmt.Sprintf("Failed to allocate IP for %q: can't change sharing key for %q, address also in use by %s/%s",
				ns+"/"+svc.Name, ns+"/"+svc.Name, mt.PlaceholderNS, blamed),
			LastTimestamp: metav1.Now(),
		})
	}

	refuse(corev1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: ns, Name: "deleted", UID: types.UID("d0d0d0d0-0000-4000-8000-000000000001")},
		"alloc-gone-v4")
	mt.Kit.Create(g, b.Service(ns, "replaced", b.ClusterIPOnly()))
	refuse(corev1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: ns, Name: "replaced", UID: types.UID("d0d0d0d0-0000-4000-8000-000000000002")},
		"alloc-replaced-v4")
	g.Consistently(buried, 5*time.Second, mt.Tick).ShouldNot(ContainElement(BeElementOf("alloc-gone-v4", "alloc-replaced-v4")),
		"a refusal of a Service that is gone is moot")

	// The control: the same refusal of the Service that exists.
	mt.Kit.Create(g, b.Service(ns, "waiting", b.ClusterIPOnly()))
	waiting := mt.Kit.Service(g, ns, "waiting")
	refuse(corev1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: ns, Name: "waiting", UID: waiting.UID}, "alloc-standing-v4")
	g.Eventually(buried, mt.Timeout, mt.Tick).Should(ContainElement("alloc-standing-v4"))
	g.Eventually(mt.Kit.Gone(b.Service(mt.PlaceholderNS, "alloc-standing-v4")), mt.Timeout, mt.Tick).Should(BeTrue(),
		"the tombstone goes once MetalLB handled it")
	g.Expect(buried()).NotTo(ContainElement(BeElementOf("alloc-gone-v4", "alloc-replaced-v4")))
}
