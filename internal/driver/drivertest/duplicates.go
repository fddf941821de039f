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

package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// duplicateWithin bounds how long a copy of a recorded address may go
// unreported: docs/design.md promises seconds.
const duplicateWithin = 10 * time.Second

// duplicate: an admin creates a second IPAddress for an address the driver
// recorded for a claim, once the claim is Bound, or the moment the driver
// records it, while the claim binds it. The copy's name sorts first and it
// is created within the second the recorded one was (creation timestamps
// have second precision), where the order of creation cannot tell them
// apart. Every round the copy is Pending (Duplicate) within seconds, with
// a warning naming the recorded one, and the backend holds nothing for it;
// the recorded one stays Bound to its claim and held, also once the admin
// deletes the copy; once settled, nobody rewrites the copy, and no
// conflict is reported over it. (Left until the claims go, the copy would keep the
// address after the recorded one, and a backend would hold it for an
// IPAddress it did not create.)
func duplicate(t *testing.T, g *WithT, s *suite) {
	ns := s.kit.Namespace(t)
	v4, _ := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimDelete, v4)
	rounds, tied := testkit.Rounds(10, 14), 0 // a /28 has 16 addresses
	for i := range rounds {
		whileBinding := i%2 == 1
		claim := fmt.Sprintf("web-%d", i)
		testkit.NextSecond()
		s.claim(g, ns, claim, class, v1alpha1.IPv4)
		var first *v1alpha1.IPAddress
		if whileBinding {
			first = s.recordedFor(g, ns, claim)
		} else {
			first = s.kit.Address(g, s.bound(g, ns, claim)[0].Name)
		}
		copied := b.Address("a-"+first.Name, first.Spec.Address, class)
		s.kit.Make(t, g, copied)
		if first.CreationTimestamp.Equal(&s.kit.Address(g, copied.Name).CreationTimestamp) {
			tied++
		}

		// The three settle together within seconds of the copy, and stay.
		state := func() []any {
			return []any{s.kit.StateOfAddress(g, copied.Name)(), s.kit.StateOfAddress(g, first.Name)(), s.kit.StateOfClaim(g, ns, claim)()}
		}
		want := []any{
			testkit.AddressState{Phase: v1alpha1.AddressPending, Reason: v1alpha1.ReasonDuplicate},
			testkit.AddressState{Phase: v1alpha1.AddressBound, Reason: v1alpha1.ReasonBound, Claim: ns + "/" + claim},
			testkit.ClaimState{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{first.Name}},
		}
		g.Eventually(state, duplicateWithin, tick).Should(Equal(want), "round %d", i)
		a := s.kit.Address(g, copied.Name)
		g.Expect(testkit.Condition(a.Status.Conditions, v1alpha1.ConditionBound).Message).To(
			ContainSubstring("IPAddress %s already has address %s", first.Name, first.Spec.Address))
		g.Eventually(s.kit.WarningsAbout(g, a), duplicateWithin, tick).Should(ContainElement(And(
			HavePrefix(v1alpha1.EventDuplicateAddress+": "), ContainSubstring("IPAddress "+first.Name))), "round %d", i)
		g.Eventually(s.condition(g, copied.Name, v1alpha1.ConditionHeld), duplicateWithin, tick).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", v1alpha1.ReasonDuplicate)), "the backend holds nothing for the copy")
		s.held(g, []v1alpha1.ClaimedAddress{{Name: first.Name, Address: first.Spec.Address}})
		settled := s.kit.Address(g, copied.Name).ResourceVersion
		g.Consistently(state, time.Second, tick).Should(Equal(want), "round %d", i)
		if !whileBinding {
			g.Expect(s.kit.Address(g, copied.Name).ResourceVersion).To(Equal(settled), "round %d: nobody rewrites a settled copy", i)
		}
		g.Expect(s.kit.EventsAbout(g, a, v1alpha1.EventAddressConflict)()).To(BeEmpty(), "round %d: a copy is no conflict", i)

		// The admin deletes the copy: the recorded one is left as it was.
		g.Expect(s.c.Delete(context.Background(), copied)).To(Succeed())
		g.Eventually(s.kit.Gone(copied), timeout, tick).Should(BeTrue(), "the copy goes")
		g.Expect(s.kit.StateOfAddress(g, first.Name)()).To(Equal(want[1]), "round %d", i)
		g.Expect(s.kit.StateOfClaim(g, ns, claim)()).To(Equal(want[2]), "round %d", i)
		s.held(g, []v1alpha1.ClaimedAddress{{Name: first.Name, Address: first.Spec.Address}})
	}
	g.Expect(tied).To(BeNumerically(">", 0), "no copy shared its recorded one's creation timestamp: the race was never run")
	t.Logf("%d of %d copies were created within the second of the recorded address", tied, rounds)
}

// recordedFor waits, polling fast, for the driver to record an IPAddress
// bound to the claim, and returns it: what a claim binds at once.
func (s *suite) recordedFor(g *WithT, ns, claim string) *v1alpha1.IPAddress {
	var found *v1alpha1.IPAddress
	g.Eventually(func() *v1alpha1.IPAddress {
		list := &v1alpha1.IPAddressList{}
		g.Expect(s.c.List(context.Background(), list)).To(Succeed())
		for i := range list.Items {
			if ref := list.Items[i].Spec.ClaimRef; ref != nil && ref.Namespace == ns && ref.Name == claim {
				found = &list.Items[i]
			}
		}
		return found
	}, timeout, 5*time.Millisecond).ShouldNot(BeNil(), "the driver records an address for claim %s/%s", ns, claim)
	return found
}
