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
package core

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

func TestDecideAccess(t *testing.T) {
	public := map[string]string{"tier": "public"}
	withUID := func(uid types.UID) b.ClaimOption {
		return func(c *v1alpha1.IPAddressClaim) { c.UID = uid }
	}
	ledger := func(entries ...v1alpha1.AdmittedClaim) *v1alpha1.IPAddressClassUsage {
		return &v1alpha1.IPAddressClassUsage{Spec: v1alpha1.IPAddressClassUsageSpec{Claims: entries}}
	}
	entry := func(name string, n int32) v1alpha1.AdmittedClaim {
		return v1alpha1.AdmittedClaim{Name: name, UID: types.UID("uid-" + name), Addresses: n}
	}
	cases := []struct {
		name       string
		class      *v1alpha1.IPAddressClass
		claim      *v1alpha1.IPAddressClaim
		labels     map[string]string
		ledger     *v1alpha1.IPAddressClassUsage
		want       accessVerdict
		wantReason string
	}{{
		name: "no policy", class: b.Class("c", "p"), claim: b.Claim("ns", "a"),
		want: accessGranted,
	}, {
		name: "selector matches", class: b.Class("c", "p", b.NamespaceSelector(public)), claim: b.Claim("ns", "a"),
		labels: public, want: accessGranted,
	}, {
		name: "selector does not match", class: b.Class("c", "p", b.NamespaceSelector(public)), claim: b.Claim("ns", "a"),
		labels: map[string]string{"tier": "internal"}, want: accessRefused, wantReason: v1alpha1.ReasonClassNotAllowed,
	}, {
		name: "selector against a namespace without labels", class: b.Class("c", "p", b.NamespaceSelector(public)), claim: b.Claim("ns", "a"),
		want: accessRefused, wantReason: v1alpha1.ReasonClassNotAllowed,
	}, {
		name:  "empty selector matches every namespace",
		class: b.Class("c", "p", func(c *v1alpha1.IPAddressClass) { c.Spec.NamespaceSelector = &metav1.LabelSelector{} }),
		claim: b.Claim("ns", "a"), want: accessGranted,
	}, {
		name: "invalid selector refuses",
		class: b.Class("c", "p", func(c *v1alpha1.IPAddressClass) {
			c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		}),
		claim: b.Claim("ns", "a"), want: accessRefused, wantReason: v1alpha1.ReasonClassNotAllowed,
	}, {
		name:  "selector with a malformed label key refuses",
		class: b.Class("c", "p", b.NamespaceSelector(map[string]string{"not a key": "x"})),
		claim: b.Claim("ns", "a"), labels: map[string]string{"not a key": "x"}, want: accessRefused, wantReason: v1alpha1.ReasonClassNotAllowed,
	}, {
		name: "selector refuses before the limit is counted", class: b.Class("c", "p", b.NamespaceSelector(public), b.PerNamespace(5)),
		claim: b.Claim("ns", "a"), want: accessRefused, wantReason: v1alpha1.ReasonClassNotAllowed,
	}, {
		name: "first claim under a limit, no ledger yet", class: b.Class("c", "p", b.PerNamespace(1)), claim: b.Claim("ns", "a"),
		want: accessRecord,
	}, {
		name: "fits exactly", class: b.Class("c", "p", b.PerNamespace(2)), claim: b.Claim("ns", "b"),
		ledger: ledger(entry("a", 1)), want: accessRecord,
	}, {
		name: "limit reached", class: b.Class("c", "p", b.PerNamespace(1)), claim: b.Claim("ns", "b"),
		ledger: ledger(entry("a", 1)), want: accessRefused, wantReason: v1alpha1.ReasonClassLimitReached,
	}, {
		name: "dual counts two", class: b.Class("c", "p", b.PerNamespace(2)), claim: b.Claim("ns", "b", b.Family(v1alpha1.Dual)),
		ledger: ledger(entry("a", 1)), want: accessRefused, wantReason: v1alpha1.ReasonClassLimitReached,
	}, {
		name: "dual fits in two", class: b.Class("c", "p", b.PerNamespace(2)), claim: b.Claim("ns", "b", b.Family(v1alpha1.Dual)),
		want: accessRecord,
	}, {
		name: "a single claim fits where a dual did not", class: b.Class("c", "p", b.PerNamespace(3)), claim: b.Claim("ns", "c"),
		ledger: ledger(entry("a", 2)), want: accessRecord,
	}, {
		name: "limit zero admits nothing", class: b.Class("c", "p", b.PerNamespace(0)), claim: b.Claim("ns", "a"),
		want: accessRefused, wantReason: v1alpha1.ReasonClassLimitReached,
	}, {
		name: "already in the ledger", class: b.Class("c", "p", b.PerNamespace(1)), claim: b.Claim("ns", "a", withUID("uid-a")),
		ledger: ledger(entry("a", 1)), want: accessRecorded,
	}, {
		name: "in the ledger even when the limit was lowered below it", class: b.Class("c", "p", b.PerNamespace(0)),
		claim: b.Claim("ns", "a", withUID("uid-a")), ledger: ledger(entry("a", 1), entry("b", 1)), want: accessRecorded,
	}, {
		name: "an earlier claim of the same name does not admit this one", class: b.Class("c", "p", b.PerNamespace(1)),
		claim: b.Claim("ns", "a", withUID("uid-new")), ledger: ledger(entry("a", 1)), want: accessRefused, wantReason: v1alpha1.ReasonClassLimitReached,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := decideAccess(accessRequest{claim: tc.claim, class: tc.class, namespaceLabels: tc.labels, ledger: tc.ledger})
			g.Expect(d.verdict).To(Equal(tc.want))
			g.Expect(d.reason).To(Equal(tc.wantReason))
			if tc.want == accessRefused && !d.invalidSelector {
				g.Expect(d.message).To(ContainSubstring(tc.claim.Namespace))
			}
		})
	}
}

func TestLimitMessageNamesTheCount(t *testing.T) {
	g := NewWithT(t)
	d := decideAccess(accessRequest{claim: b.Claim("tenant", "c", b.Family(v1alpha1.Dual)), class: b.Class("public", "p", b.PerNamespace(2)),
		ledger: &v1alpha1.IPAddressClassUsage{Spec: v1alpha1.IPAddressClassUsageSpec{Claims: []v1alpha1.AdmittedClaim{{Name: "web", UID: "u", Addresses: 1}}}}})
	g.Expect(d.message).To(Equal("Namespace tenant holds 1 of the 2 addresses IPAddressClass public allows per namespace (claims web) and this claim needs 2; " +
		"it waits until claims are deleted or the limit is raised"))
}

func TestLedgerEntries(t *testing.T) {
	g := NewWithT(t)
	es := withEntry(nil, v1alpha1.AdmittedClaim{Name: "b", UID: "ub", Addresses: 2})
	es = withEntry(es, v1alpha1.AdmittedClaim{Name: "a", UID: "ua", Addresses: 1})
	es = withEntry(es, v1alpha1.AdmittedClaim{Name: "b", UID: "ub2", Addresses: 1})
	g.Expect(es).To(Equal([]v1alpha1.AdmittedClaim{{Name: "a", UID: "ua", Addresses: 1}, {Name: "b", UID: "ub2", Addresses: 1}}))
	g.Expect(ledgerSum(es)).To(Equal(int32(2)))
	g.Expect(withoutEntries(es, map[types.UID]bool{"ua": true})).To(Equal([]v1alpha1.AdmittedClaim{{Name: "b", UID: "ub2", Addresses: 1}}))
}

func TestOverLimit(t *testing.T) {
	g := NewWithT(t)
	l := func(ns string, n int32) v1alpha1.IPAddressClassUsage {
		u := v1alpha1.IPAddressClassUsage{Spec: v1alpha1.IPAddressClassUsageSpec{Claims: []v1alpha1.AdmittedClaim{{Name: "x", UID: "x", Addresses: n}}}}
		u.Namespace = ns
		return u
	}
	g.Expect(overLimit(1, []v1alpha1.IPAddressClassUsage{l("b", 2), l("a", 1), l("c", 2)})).To(Equal([]string{"b (2/1)", "c (2/1)"}))
	g.Expect(overLimit(2, []v1alpha1.IPAddressClassUsage{l("b", 2)})).To(BeEmpty())

	class := b.Class("public", "p", b.PerNamespace(1))
	class.Generation = 3
	c := withinLimits(class, []string{"b (2/1)"}, t0)
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(Equal(v1alpha1.ReasonNamespacesOverLimit))
	g.Expect(c.ObservedGeneration).To(Equal(int64(3)))
	g.Expect(c.Message).To(ContainSubstring("b (2/1)"))
	g.Expect(withinLimits(class, nil, t0).Status).To(Equal(metav1.ConditionTrue))
}

func TestMissingEntriesCountOnlyAdmittedLiveClaims(t *testing.T) {
	g := NewWithT(t)
	class := b.Class("public", "p", b.PerNamespace(1))
	claim := func(name string, mutate func(*v1alpha1.IPAddressClaim)) v1alpha1.IPAddressClaim {
		c := b.Claim("ns", name, b.Family(v1alpha1.Dual))
		c.UID = types.UID("uid-" + name)
		mutate(c)
		return *c
	}
	admitted := func(c *v1alpha1.IPAddressClaim) { c.Status.AdmittedClassName = "public" }
	claims := []v1alpha1.IPAddressClaim{
		claim("admitted", admitted),
		// A stamp is what a tenant can write: it counts for nothing.
		claim("stamped", func(c *v1alpha1.IPAddressClaim) {
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, v1alpha1.AnnotationProvisioner, "p")
		}),
		claim("other-class", func(c *v1alpha1.IPAddressClaim) { c.Status.AdmittedClassName = "private" }),
		claim("bound", func(c *v1alpha1.IPAddressClaim) { c.Status.Phase = v1alpha1.ClaimBound }),
		claim("holding", func(c *v1alpha1.IPAddressClaim) {
			c.Status.Addresses = []v1alpha1.ClaimedAddress{{Name: "ip-203-0-113-7", Address: "203.0.113.7"}}
		}),
		claim("lost", func(c *v1alpha1.IPAddressClaim) { c.Status.Phase = v1alpha1.ClaimLost }),
		claim("refused", func(c *v1alpha1.IPAddressClaim) { c.Status.Phase = v1alpha1.ClaimPending }),
		claim("deleting", func(c *v1alpha1.IPAddressClaim) {
			admitted(c)
			c.DeletionTimestamp = &t0
		}),
		claim("known", admitted),
	}
	known := []v1alpha1.AdmittedClaim{{Name: "known", UID: "uid-known", Addresses: 2}}
	got := missingEntries(known, claims, class)
	names := make([]string, 0, len(got))
	for _, e := range got {
		names = append(names, e.Name)
		g.Expect(e.Addresses).To(Equal(int32(2)), e.Name)
	}
	g.Expect(names).To(Equal([]string{"admitted", "bound", "holding", "known", "lost"}))
	g.Expect(known).To(HaveLen(1), "the ledger passed in is not modified")
}
