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
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// reportLimits keeps a class's WithinLimits condition: on a class with
// addressesPerNamespace, False while some namespace's ledger sums past the
// limit. When the limit is new (the condition has not seen this generation),
// it first enters into the ledgers the claims admitted before the limit
// existed, so that they count against it; they keep their addresses.
func (r *ClassReconciler) reportLimits(ctx context.Context, class *v1alpha1.IPAddressClass) error {
	limit := class.Spec.AddressesPerNamespace
	prev := meta.FindStatusCondition(class.Status.Conditions, v1alpha1.ConditionWithinLimits)
	if limit == nil {
		if prev == nil {
			return nil
		}
		_, err := manager.UpdateStatus(ctx, r.Client, class, func(c *v1alpha1.IPAddressClass) {
			meta.RemoveStatusCondition(&c.Status.Conditions, v1alpha1.ConditionWithinLimits)
		})
		return err
	}
	if prev == nil || prev.ObservedGeneration != class.Generation {
		if err := r.seedLedgers(ctx, class); err != nil {
			return err
		}
	}
	ledgers := &v1alpha1.IPAddressClassUsageList{}
	if err := r.List(ctx, ledgers, client.MatchingFields{indexUsageByClass: class.Name}); err != nil {
		return err
	}
	cond := withinLimits(class, overLimit(*limit, ledgers.Items), metav1.NewTime(r.Clock.Now()))
	_, err := manager.UpdateStatus(ctx, r.Client, class, func(c *v1alpha1.IPAddressClass) {
		meta.SetStatusCondition(&c.Status.Conditions, cond)
	})
	return err
}

// withinLimits is the WithinLimits condition for the namespaces found over
// the class's limit.
func withinLimits(class *v1alpha1.IPAddressClass, over []string, now metav1.Time) metav1.Condition {
	cond := metav1.Condition{Type: v1alpha1.ConditionWithinLimits, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonWithinLimits,
		Message:            fmt.Sprintf("Every namespace holds at most %d addresses of this class", *class.Spec.AddressesPerNamespace),
		ObservedGeneration: class.Generation, LastTransitionTime: now}
	if len(over) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, v1alpha1.ReasonNamespacesOverLimit
		cond.Message = fmt.Sprintf("%d namespace(s) hold more addresses than spec.addressesPerNamespace, admitted before it was lowered; "+
			"they keep them, and their new claims wait until they are under it: %s", len(over), strings.Join(over, ", "))
	}
	return cond
}

// seedLedgers enters the class's admitted claims missing from their
// namespaces' ledgers, creating ledgers where needed. It runs when the limit
// changes, not on every pass: it reads every claim of the class.
func (r *ClassReconciler) seedLedgers(ctx context.Context, class *v1alpha1.IPAddressClass) error {
	claims := &v1alpha1.IPAddressClaimList{}
	if err := r.List(ctx, claims, client.MatchingFields{indexClaimByClass: class.Name}); err != nil {
		return err
	}
	byNamespace := map[string][]v1alpha1.IPAddressClaim{}
	for _, c := range claims.Items {
		if holdsAdmission(&c, class) {
			byNamespace[c.Namespace] = append(byNamespace[c.Namespace], c)
		}
	}
	for ns, cs := range byNamespace {
		stored := &v1alpha1.IPAddressClassUsage{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: class.Name}, stored)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		next := stored.DeepCopy()
		next.Namespace, next.Name = ns, class.Name
		next.Spec.Claims = missingEntries(stored.Spec.Claims, cs, class)
		if len(next.Spec.Claims) == len(stored.Spec.Claims) {
			continue
		}
		next.Spec.Addresses = ledgerSum(next.Spec.Claims)
		if err != nil { // not found
			next.ResourceVersion = ""
			err = r.Create(ctx, next)
		} else {
			err = r.Update(ctx, next)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
