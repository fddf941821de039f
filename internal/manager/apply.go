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

package manager

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyIfChanged writes obj with server-side apply as fieldOwner, unless the
// cached copy already has its spec, labels and owners: a driver renders its
// backend's configuration on every pass over a class, and most passes change
// nothing.
func ApplyIfChanged(ctx context.Context, c client.Client, obj *unstructured.Unstructured, fieldOwner string) error {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	if err == nil && equality.Semantic.DeepEqual(cur.Object["spec"], obj.Object["spec"]) &&
		equality.Semantic.DeepEqual(cur.GetLabels(), obj.GetLabels()) &&
		equality.Semantic.DeepEqual(cur.GetOwnerReferences(), obj.GetOwnerReferences()) {
		return nil
	}
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner), client.ForceOwnership)
}
