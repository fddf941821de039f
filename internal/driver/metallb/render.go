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
	"fmt"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// Reasons of a class's Rendered condition when nothing is rendered.
const (
	ReasonInvalidParameters = "InvalidParameters"
	ReasonOverlapsOtherPool = "OverlapsOtherPool"
)

// fieldOwner is the server-side apply manager of rendered objects.
const fieldOwner = "metallb-iad"

// +kubebuilder:rbac:groups=metallb.io,resources=ipaddresspools,verbs=get;list;watch;create;patch,namespace=metallb-system
// +kubebuilder:rbac:groups=metallb.io,resources=l2advertisements;bgpadvertisements,verbs=get;list;watch;create;patch;delete,namespace=metallb-system

// RenderClass renders one IPAddressPool and one advertisement for a class,
// both owned by it. Parameters that do not decode, or ranges that overlap
// another pool (MetalLB would then refuse its whole configuration), render
// nothing and leave the previous rendering in place.
func (b *Backend) RenderClass(ctx context.Context, class *v1alpha1.IPAddressClass, keep []netip.Addr) (driver.RenderResult, error) {
	p, err := params.Decode(class.Spec.Parameters)
	if err != nil {
		return driver.RenderResult{Problem: err.Error(), Reason: ReasonInvalidParameters}, nil
	}
	if problems := params.AggregationConflicts(p, keep); len(problems) > 0 {
		return driver.RenderResult{Problem: strings.Join(problems, "; "), Reason: ReasonInvalidParameters}, nil
	}
	overlaps, err := b.overlapsWithOtherPools(ctx, class.Name, p.Ranges)
	if err != nil {
		return driver.RenderResult{}, err
	}
	if len(overlaps) > 0 {
		return driver.RenderResult{Problem: strings.Join(overlaps, "; "), Reason: ReasonOverlapsOtherPool}, nil
	}

	pool, adv := rendering(class, b.opts.MetalLBNamespace, p, keep)
	for _, obj := range []*unstructured.Unstructured{pool, adv} {
		if err := manager.ApplyIfChanged(ctx, b, obj, fieldOwner); err != nil {
			return driver.RenderResult{}, err
		}
	}
	// A class that switched between L2 and BGP leaves the other kind behind.
	other := params.L2AdvertisementGVK
	if adv.GroupVersionKind() == params.L2AdvertisementGVK {
		other = params.BGPAdvertisementGVK
	}
	if err := b.deleteIfOwned(ctx, other, params.AdvertisementName(class.Name), class); err != nil {
		return driver.RenderResult{}, err
	}

	capacity := driver.CountRanges(ipaddr.Merge(p.Ranges), func(r ipaddr.Range) int64 { return r.UsableSize(p.AvoidBuggyIPs) })
	unselected, err := b.unselected(ctx, p)
	if err != nil {
		return driver.RenderResult{}, err
	}
	res := driver.RenderResult{Outside: params.Outside(p, keep), Capacity: capacity, Families: driver.FamiliesOf(p.Ranges), Ranges: p.Ranges}
	if unselected != "" {
		res.Unusable, res.UnusableReason = unselected, ReasonNoNodeSelected
	}
	return res, nil
}

// rendering is the IPAddressPool and the advertisement the driver renders for
// a class with decoded parameters p, keeping the addresses keep, both owned
// by the class. The handover of an import writes the same objects.
func rendering(class *v1alpha1.IPAddressClass, namespace string, p *params.Parameters, keep []netip.Addr) (pool, adv *unstructured.Unstructured) {
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "IPAddressClass", Name: class.Name,
		UID: class.UID, Controller: new(true), BlockOwnerDeletion: new(true)}
	pool = params.Pool(class.Name, namespace, p, keep)
	// Services the driver withdrew a pin from may not keep an address of
	// the pool: without this MetalLB would let them keep it.
	_ = unstructured.SetNestedSlice(pool.Object, []any{map[string]any{
		"matchExpressions": []any{map[string]any{"key": v1alpha1.LabelWithdrawn, "operator": "DoesNotExist"}},
	}}, "spec", "serviceAllocation", "serviceSelectors")
	adv = params.Advertisement(class.Name, namespace, p)
	for _, obj := range []*unstructured.Unstructured{pool, adv} {
		obj.SetOwnerReferences([]metav1.OwnerReference{owner})
	}
	return pool, adv
}

func (b *Backend) deleteIfOwned(ctx context.Context, gvk schema.GroupVersionKind, name string, owner metav1.Object) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := b.Get(ctx, client.ObjectKey{Namespace: b.opts.MetalLBNamespace, Name: name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, owner) {
		return nil
	}
	if err := b.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// overlapsWithOtherPools finds, through the bucket index, the other pools
// whose ranges overlap the class's, and describes each overlap.
func (b *Backend) overlapsWithOtherPools(ctx context.Context, className string, ranges []ipaddr.Range) ([]string, error) {
	seen := map[string]bool{params.PoolName(className): true}
	var out []string
	for _, r := range ranges {
		for _, key := range r.LookupKeys() {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(params.IPAddressPoolGVK.GroupVersion().WithKind("IPAddressPoolList"))
			if err := b.List(ctx, list, client.InNamespace(b.opts.MetalLBNamespace), client.MatchingFields{indexPoolByBucket: key}); err != nil {
				return nil, err
			}
			for i := range list.Items {
				pool := &list.Items[i]
				if seen[pool.GetName()] {
					continue
				}
				seen[pool.GetName()] = true
				theirs, _ := params.PoolRanges(pool)
				for _, o := range params.Overlaps(ranges, theirs) {
					out = append(out, fmt.Sprintf("%s of IPAddressPool %s/%s", o, pool.GetNamespace(), pool.GetName()))
				}
			}
		}
	}
	return out, nil
}

// poolCovers says whether the class's rendered pool contains ip; known is
// false while the pool is not rendered.
func (b *Backend) poolCovers(ctx context.Context, className string, ip netip.Addr) (covered, known bool) {
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(params.IPAddressPoolGVK)
	if err := b.Get(ctx, client.ObjectKey{Namespace: b.opts.MetalLBNamespace, Name: params.PoolName(className)}, pool); err != nil {
		return false, false
	}
	ranges, _ := params.PoolRanges(pool)
	for _, r := range ranges {
		if r.Contains(ip) {
			return true, true
		}
	}
	return false, true
}
