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
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Class access: a class's namespaceSelector says which namespaces may claim
// from it and its addressesPerNamespace how many addresses each may hold.
// A claim is admitted once, before anything is bound, pre-bound or stamped
// for it; the provisioner stamp is what lets a driver provision, so a claim
// the core refuses is never stamped and no driver ever sees it. Under a
// limit, admission is an entry in the namespace's IPAddressClassUsage for
// the class, written with the resourceVersion the count was read at: of two
// claims racing for the last address, one write fails and that claim counts
// again.

// accessRequest is everything deciding a claim's admission reads.
type accessRequest struct {
	claim *v1alpha1.IPAddressClaim
	class *v1alpha1.IPAddressClass
	// namespaceLabels are the labels of the claim's namespace.
	namespaceLabels map[string]string
	// ledger is the namespace's usage record for the class; nil if none.
	ledger *v1alpha1.IPAddressClassUsage
}

// accessVerdict is what admission does with a claim.
type accessVerdict int

const (
	// accessGranted: the class sets no limit; the claim may go on.
	accessGranted accessVerdict = iota
	// accessRecorded: the ledger already holds the claim (an earlier pass
	// wrote it and stopped before stamping).
	accessRecorded
	// accessRecord: the claim fits; it is admitted by adding it to the ledger.
	accessRecord
	// accessRefused: the claim waits; reason and message say why.
	accessRefused
)

type accessDecision struct {
	verdict         accessVerdict
	reason, message string
	// invalidSelector: the refusal is the class's fault, not the namespace's.
	invalidSelector bool
}

// decideAccess decides a claim's admission to its class. It never reads a
// client, so it is tested with tables.
func decideAccess(req accessRequest) accessDecision {
	class, claim := req.class, req.claim
	if sel := class.Spec.NamespaceSelector; sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return accessDecision{accessRefused, v1alpha1.ReasonClassNotAllowed,
				fmt.Sprintf("IPAddressClass %s has an invalid spec.namespaceSelector (%v); no namespace may claim from it", class.Name, err), true}
		}
		if !s.Matches(labels.Set(req.namespaceLabels)) {
			return accessDecision{accessRefused, v1alpha1.ReasonClassNotAllowed,
				fmt.Sprintf("IPAddressClass %s does not serve namespace %s: its labels do not match spec.namespaceSelector %s",
					class.Name, claim.Namespace, s.String()), false}
		}
	}
	limit := class.Spec.AddressesPerNamespace
	if limit == nil {
		return accessDecision{verdict: accessGranted}
	}
	var entries []v1alpha1.AdmittedClaim
	if req.ledger != nil {
		entries = req.ledger.Spec.Claims
	}
	if slices.ContainsFunc(entries, func(e v1alpha1.AdmittedClaim) bool { return e.UID == claim.UID }) {
		return accessDecision{verdict: accessRecorded}
	}
	used, want := ledgerSum(entries), claimAddresses(claim)
	if used+want > *limit {
		return accessDecision{accessRefused, v1alpha1.ReasonClassLimitReached,
			fmt.Sprintf("Namespace %s holds %d of the %d addresses IPAddressClass %s allows per namespace%s and this claim needs %d; it waits until claims are deleted or the limit is raised",
				claim.Namespace, used, *limit, class.Name, describeEntries(entries), want), false}
	}
	return accessDecision{verdict: accessRecord}
}

// claimAddresses is how many addresses a claim counts for: one per family.
func claimAddresses(c *v1alpha1.IPAddressClaim) int32 {
	return int32(len(c.Spec.Family.Families()))
}

func ledgerSum(entries []v1alpha1.AdmittedClaim) int32 {
	var n int32
	for _, e := range entries {
		n += e.Addresses
	}
	return n
}

func describeEntries(entries []v1alpha1.AdmittedClaim) string {
	if len(entries) == 0 {
		return ""
	}
	const shown = 5
	names := make([]string, 0, shown)
	for i, e := range entries {
		if i == shown {
			names = append(names, fmt.Sprintf("%d more", len(entries)-shown))
			break
		}
		names = append(names, e.Name)
	}
	return " (claims " + strings.Join(names, ", ") + ")"
}

// withEntry returns the ledger's entries with one added or replaced, sorted
// by name, and their sum.
func withEntry(entries []v1alpha1.AdmittedClaim, e v1alpha1.AdmittedClaim) []v1alpha1.AdmittedClaim {
	out := slices.DeleteFunc(slices.Clone(entries), func(x v1alpha1.AdmittedClaim) bool { return x.Name == e.Name })
	out = append(out, e)
	slices.SortFunc(out, func(a, b v1alpha1.AdmittedClaim) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// withoutEntries returns the ledger's entries without the claims of the
// given UIDs.
func withoutEntries(entries []v1alpha1.AdmittedClaim, gone map[types.UID]bool) []v1alpha1.AdmittedClaim {
	return slices.DeleteFunc(slices.Clone(entries), func(x v1alpha1.AdmittedClaim) bool { return gone[x.UID] })
}

// restricted reports whether a class limits who may claim from it or how much.
func restricted(c *v1alpha1.IPAddressClass) bool {
	return c.Spec.NamespaceSelector != nil || c.Spec.AddressesPerNamespace != nil
}

// overLimit lists, from a class's ledgers, the namespaces holding more than
// the limit, as "namespace (used/limit)" sorted by namespace.
func overLimit(limit int32, ledgers []v1alpha1.IPAddressClassUsage) []string {
	var out []string
	for _, l := range ledgers {
		if used := ledgerSum(l.Spec.Claims); used > limit {
			out = append(out, fmt.Sprintf("%s (%d/%d)", l.Namespace, used, limit))
		}
	}
	slices.Sort(out)
	return out
}
