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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// duplicateWithin bounds how long a copy of an address in use may go
// unreported: docs/design.md promises seconds.
const duplicateWithin = 10 * time.Second

// TestACopyOfAnAddressInUseIsTheDuplicate: an admin creates a second
// IPAddress for the address of a static class a claim holds, or is binding
// at that very moment. The copy's name sorts first and it is created within
// the second the first one was (creation timestamps have second precision),
// where the order of creation cannot tell them apart. Every round the copy
// is Pending (Duplicate) within seconds, with a warning naming the first,
// and the first stays Bound to its claim.
func TestACopyOfAnAddressInUseIsTheDuplicate(t *testing.T) {
	g := NewWithT(t)
	shareCore(t)
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner))
	rounds, tied := testkit.Rounds(10, 40), 0
	for i := range rounds {
		whileBinding := i%2 == 1
		ip, claim := fmt.Sprintf("198.18.19.%d", i+1), fmt.Sprintf("claim-%d", i)
		first, copied := b.Address(fmt.Sprintf("%s-z%d", class, i), ip, class), b.Address(fmt.Sprintf("%s-a%d", class, i), ip, class)
		testkit.NextSecond()
		kit.Make(t, g, first)
		g.Eventually(kit.StateOfAddress(g, first.Name), timeout, 10*time.Millisecond).Should(HaveField("Phase", v1alpha1.AddressAvailable))
		kit.Own(t, copied)
		if whileBinding {
			kit.CreateConcurrently(g, b.Claim(ns, claim, b.OfClass(class)), copied)
		} else {
			kit.Create(g, b.Claim(ns, claim, b.OfClass(class)))
			g.Eventually(kit.StateOfClaim(g, ns, claim), timeout, 10*time.Millisecond).Should(HaveField("Phase", v1alpha1.ClaimBound))
			kit.Create(g, copied)
		}
		if kit.Address(g, first.Name).CreationTimestamp.Equal(&kit.Address(g, copied.Name).CreationTimestamp) {
			tied++
		}

		// The three settle together within seconds of the copy, and stay.
		state := func() []any {
			return []any{kit.StateOfAddress(g, copied.Name)(), kit.StateOfAddress(g, first.Name)(), kit.StateOfClaim(g, ns, claim)()}
		}
		want := []any{
			testkit.AddressState{Phase: v1alpha1.AddressPending, Reason: v1alpha1.ReasonDuplicate},
			testkit.AddressState{Phase: v1alpha1.AddressBound, Reason: v1alpha1.ReasonBound, Claim: ns + "/" + claim},
			testkit.ClaimState{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{first.Name}},
		}
		g.Eventually(state, duplicateWithin, tick).Should(Equal(want), "round %d", i)
		g.Consistently(state, time.Second, tick).Should(Equal(want), "round %d", i)
		a := kit.Address(g, copied.Name)
		g.Expect(testkit.Condition(a.Status.Conditions, v1alpha1.ConditionBound).Message).To(ContainSubstring("IPAddress %s already has address %s", first.Name, ip))
		g.Eventually(kit.WarningsAbout(g, a), duplicateWithin, tick).Should(ContainElement(And(
			HavePrefix(v1alpha1.EventDuplicateAddress+": "), ContainSubstring("IPAddress "+first.Name))), "round %d", i)
	}
	g.Expect(tied).To(BeNumerically(">", 0), "no copy shared its first's creation timestamp: the race was never run")
	t.Logf("%d of %d copies were created within the second of their first", tied, rounds)
}
