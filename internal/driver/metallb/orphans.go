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

package metallb

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
)

// OrphanReconciler deletes allocation placeholders whose claim is gone
// before an IPAddress recorded their address.
//
// Design: an allocation placeholder is owned by nothing until the address it
// reserved is recorded and the hold adopts it. If its claim disappears (or
// is re-created with another UID) in that window, nobody else would ever
// release MetalLB's allocation, so this reconciler does.
type OrphanReconciler struct{ *Backend }

// Reconcile runs one pass over an allocation placeholder.
func (r *OrphanReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ph := &corev1.Service{}
	if err := r.Get(ctx, req.NamespacedName, ph); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.isAllocation(ph) || len(ph.OwnerReferences) > 0 || ph.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	claimUID := ph.Labels[v1alpha1.LabelClaimUID]
	if ns, name, ok := splitKey(ph.Annotations[annotationClaim]); ok {
		claim := &v1alpha1.IPAddressClaim{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, claim)
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		if err == nil && string(claim.UID) == claimUID && claim.DeletionTimestamp == nil {
			return ctrl.Result{}, nil // still provisioning
		}
	}
	// Recorded meanwhile? Then the hold adopts it.
	if name := ph.Annotations[annotationAddressName]; name != "" {
		a := &v1alpha1.IPAddress{}
		err := r.Get(ctx, client.ObjectKey{Name: name}, a)
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		if err == nil && a.Spec.ClaimRef != nil && string(a.Spec.ClaimRef.UID) == claimUID {
			return ctrl.Result{}, nil
		}
	}
	log.FromContext(ctx).Info("Deleting orphaned allocation placeholder", "claim", ph.Annotations[annotationClaim])
	return ctrl.Result{}, r.deletePlaceholder(ctx, ph)
}

func (b *Backend) isAllocation(o client.Object) bool {
	return o.GetNamespace() == b.opts.PlaceholderNamespace &&
		o.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderAllocation
}

// allocationsOfClaim wakes the allocation placeholders of a claim.
func (b *Backend) allocationsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	list := &corev1.ServiceList{}
	if err := b.List(ctx, list, client.InNamespace(b.opts.PlaceholderNamespace),
		client.MatchingFields{indexPlaceholderByClaimUID: string(o.GetUID())}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, s := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}

func (b *Backend) setupIndexes(ctx context.Context, idx client.FieldIndexer) error {
	inNamespace := func(o client.Object) bool {
		return o.GetNamespace() == b.opts.PlaceholderNamespace && o.GetLabels()[v1alpha1.LabelPlaceholder] != ""
	}
	if err := idx.IndexField(ctx, &corev1.Service{}, indexPlaceholderByAddress, func(o client.Object) []string {
		if key := o.GetLabels()[v1alpha1.LabelAddress]; key != "" && inNamespace(o) {
			return []string{key}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &corev1.Service{}, indexPlaceholderByClaimUID, func(o client.Object) []string {
		if uid := o.GetLabels()[v1alpha1.LabelClaimUID]; uid != "" && inNamespace(o) {
			return []string{uid}
		}
		return nil
	}); err != nil {
		return err
	}
	pool := metallbObjects()[0]
	return idx.IndexField(ctx, pool, indexPoolByBucket, func(o client.Object) []string {
		ranges, _ := params.PoolRanges(o.(*unstructured.Unstructured))
		var keys []string
		for _, r := range ranges {
			keys = append(keys, r.IndexKeys()...)
		}
		return keys
	})
}

// observePlaceholders counts placeholders by role for the metrics, from the
// informer.
func (b *Backend) observePlaceholders(ctx context.Context, mgr ctrl.Manager) error {
	inf, err := mgr.GetCache().GetInformer(ctx, &corev1.Service{})
	if err != nil {
		return err
	}
	role := func(obj any) string {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		s, ok := obj.(*corev1.Service)
		if !ok || s.Namespace != b.opts.PlaceholderNamespace {
			return ""
		}
		return s.Labels[v1alpha1.LabelPlaceholder]
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { b.metrics.placeholder(role(obj), 1) },
		UpdateFunc: func(o, n any) {
			if ro, rn := role(o), role(n); ro != rn {
				b.metrics.placeholder(ro, -1)
				b.metrics.placeholder(rn, 1)
			}
		},
		DeleteFunc: func(obj any) { b.metrics.placeholder(role(obj), -1) },
	})
	return err
}
