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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
)

// OrphanReconciler deletes allocation placeholders that nothing needs any
// more before an IPAddress recorded their address.
//
// Design: an allocation placeholder is owned by nothing until the address it
// reserved is recorded and the hold adopts it. If, in that window, its claim
// disappears (or is re-created with another UID), is bound some other way
// (the core matched a static or returned address, or accepted a
// pre-binding), names an address, moves to another class or driver, or is
// Lost, nobody else would ever release MetalLB's allocation, so this
// reconciler does: nothing holds an address the ledger does not record for
// longer than a pass.
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
	why, err := r.unneeded(ctx, ph)
	if err != nil || why == "" {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("Deleting allocation placeholder nothing needs", "claim", ph.Annotations[annotationClaim], "why", why)
	return ctrl.Result{}, r.deletePlaceholder(ctx, ph)
}

// unneeded says why no claim needs an allocation placeholder any more, or
// "" while its claim still waits for it.
func (r *OrphanReconciler) unneeded(ctx context.Context, ph *corev1.Service) (string, error) {
	ns, name, ok := splitKey(ph.Annotations[annotationClaim])
	if !ok {
		return "it names no claim", nil
	}
	claim := &v1alpha1.IPAddressClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, claim); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return "", err
		}
		return "its claim is gone", nil
	}
	family := v1alpha1.IPFamily(ph.Labels[v1alpha1.LabelFamily])
	class := claim.ClassName()
	switch {
	case string(claim.UID) != ph.Labels[v1alpha1.LabelClaimUID]:
		return "its claim was re-created", nil
	case claim.DeletionTimestamp != nil:
		return "its claim is being deleted", nil
	case claim.Annotations[v1alpha1.AnnotationProvisioner] != r.Provisioner():
		return "its claim is served by another driver now", nil
	case claim.Spec.AddressName != "":
		return "its claim names an address", nil
	case claim.Status.Phase == v1alpha1.ClaimBound || claim.Status.Phase == v1alpha1.ClaimLost:
		return "its claim is " + string(claim.Status.Phase), nil
	case class != ph.Labels[v1alpha1.LabelClass]:
		return "its claim moved to class " + class, nil
	case !slices.Contains(claim.Spec.Family.Families(), family):
		return "its claim no longer asks for " + string(family), nil
	}
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{manager.IndexAddressByClaim: claim.ClaimKey()}); err != nil {
		return "", err
	}
	for _, a := range list.Items {
		if ref := a.Spec.ClaimRef; ref.UID == claim.UID && a.Family() == family {
			return "its claim has an " + string(family) + " address already", nil
		}
	}
	return "", nil
}

func (b *Backend) isAllocation(o client.Object) bool {
	return o.GetNamespace() == b.opts.PlaceholderNamespace &&
		o.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderAllocation
}

// allocationsOfClaim wakes the allocation placeholders of a claim.
func (b *Backend) allocationsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	return manager.RequestsByIndex(ctx, b, &corev1.ServiceList{}, indexPlaceholderByClaimUID, string(o.GetUID()),
		client.InNamespace(b.opts.PlaceholderNamespace))
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
	if err := idx.IndexField(ctx, &corev1.Service{}, indexPlaceholderByYielded, func(o client.Object) []string {
		if ip := o.GetAnnotations()[annotationYieldedTo]; ip != "" && inNamespace(o) {
			return []string{ip}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1alpha1.IPAddressClass{}, indexClassSelectingNodes, b.indexSelectingNodes); err != nil {
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
