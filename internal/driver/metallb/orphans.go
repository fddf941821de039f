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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
)

func (b *Backend) setupIndexes(ctx context.Context, idx client.FieldIndexer) error {
	if err := b.Set.Indexes(ctx, idx); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &corev1.Service{}, indexPlaceholderByYielded, func(o client.Object) []string {
		if ip := o.GetAnnotations()[v1alpha1.AnnotationYieldedTo]; ip != "" && b.Set.In(o) {
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
	role := func(s *corev1.Service) string {
		if s == nil || s.Namespace != b.opts.PlaceholderNamespace {
			return ""
		}
		return s.Labels[v1alpha1.LabelPlaceholder]
	}
	return manager.Observe(ctx, mgr, manager.Changes(func(old, new *corev1.Service) {
		if ro, rn := role(old), role(new); ro != rn {
			b.metrics.placeholder(ro, -1)
			b.metrics.placeholder(rn, 1)
		}
	}))
}
