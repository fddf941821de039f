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

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// Indexes of class access.
const (
	// indexClaimByClass: the class a live claim names or resolved to.
	indexClaimByClass = "core.claimByClass"
	// indexUnadmittedClaim: for live claims that are neither admitted to the
	// class they ask for nor Bound or Lost (so: not yet processed, waiting for their
	// class, or refused by its policy), unadmittedAny and
	// unadmittedClassKey(class), "class:" while no class is known. The keys
	// do not depend on the refusal written to the claim's status, so a
	// policy change that lands while a pass is refusing the claim still
	// finds it.
	indexUnadmittedClaim = "core.unadmittedClaim"
	// indexUsageByClass: the class of a usage ledger (its name).
	indexUsageByClass = "core.usageByClass"

	unadmittedAny = "any"
)

func unadmittedClassKey(class string) string { return "class:" + class }

func accessIndexes() []manager.Index {
	return []manager.Index{
		{Object: &v1alpha1.IPAddressClaim{}, Field: indexClaimByClass, Extract: func(o client.Object) []string {
			c := o.(*v1alpha1.IPAddressClaim)
			if name := c.ClassName(); name != "" && c.DeletionTimestamp == nil {
				return []string{name}
			}
			return nil
		}},
		{Object: &v1alpha1.IPAddressClaim{}, Field: indexUnadmittedClaim, Extract: func(o client.Object) []string {
			c := o.(*v1alpha1.IPAddressClaim)
			if c.DeletionTimestamp != nil || c.AdmittedTo() != "" ||
				c.Status.Phase == v1alpha1.ClaimBound || c.Status.Phase == v1alpha1.ClaimLost {
				return nil
			}
			return []string{unadmittedAny, unadmittedClassKey(c.ClassName())}
		}},
		{Object: &v1alpha1.IPAddressClassUsage{}, Field: indexUsageByClass, Extract: func(o client.Object) []string {
			return []string{o.GetName()}
		}},
	}
}

// unadmittedInNamespace wakes the claims of a namespace that no class
// admitted yet: the namespace's labels changed.
func (r *ClaimReconciler) unadmittedInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.claimsInNamespaceByIndex(ctx, obj.GetName(), indexUnadmittedClaim, unadmittedAny)
}

// unadmittedForLedger wakes the claims of a ledger's namespace waiting for
// admission to its class, or for any class: the ledger went down.
func (r *ClaimReconciler) unadmittedForLedger(ctx context.Context, obj client.Object) []reconcile.Request {
	return append(r.claimsInNamespaceByIndex(ctx, obj.GetNamespace(), indexUnadmittedClaim, unadmittedClassKey(obj.GetName())),
		r.claimsInNamespaceByIndex(ctx, obj.GetNamespace(), indexUnadmittedClaim, unadmittedClassKey(""))...)
}

func (r *ClaimReconciler) claimsInNamespaceByIndex(ctx context.Context, ns, index, key string) []reconcile.Request {
	return manager.RequestsByIndex(ctx, r, &v1alpha1.IPAddressClaimList{}, index, key, client.InNamespace(ns))
}

// countedInLedger wakes the claims of a deleted ledger's namespace that
// name its class, so that those admitted to it count again.
func (r *ClaimReconciler) countedInLedger(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.claimsInNamespaceByIndex(ctx, obj.GetNamespace(), indexClaimByClass, obj.GetName())
}

// ledgerShrank passes a ledger's deletion and the updates that lower its
// count: only those can let a refused claim in.
func ledgerShrank() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return ledgerSum(e.ObjectNew.(*v1alpha1.IPAddressClassUsage).Spec.Claims) <
				ledgerSum(e.ObjectOld.(*v1alpha1.IPAddressClassUsage).Spec.Claims)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// classOfLedger wakes a ledger's class, whose WithinLimits condition sums
// the ledgers.
func classOfLedger(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetName()}}}
}
