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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus runs mutate on obj and, if that changed obj, writes its status
// as a merge patch guarded by the resourceVersion obj was read at: a pass
// that acted on a stale copy is refused with 409 Conflict and runs again
// (RetryConflicts), so it never overwrites what another manager wrote
// meanwhile. It reports whether it wrote; on return obj holds what was
// written.
func PatchStatus[T client.Object](ctx context.Context, c client.Client, obj T, mutate func(T)) (bool, error) {
	orig := obj.DeepCopyObject().(T)
	mutate(obj)
	if equality.Semantic.DeepEqual(orig, obj) {
		return false, nil
	}
	return true, c.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// UpdateStatus runs mutate on obj and, if that changed obj, writes its status
// whole (PUT to the status subresource), guarded by the resourceVersion obj
// was read at, as PatchStatus is. The API server does less per write than for
// a merge patch, which it applies to the stored object first (measured in
// docs/performance.md, issue 43), but the request carries every field of the
// manager's own types and none it does not know: only a manager that ships
// the kind's schema uses it, the core, whose chart installs and upgrades the
// CRDs. Drivers, which may be older than the CRDs, patch.
func UpdateStatus[T client.Object](ctx context.Context, c client.Client, obj T, mutate func(T)) (bool, error) {
	orig := obj.DeepCopyObject().(T)
	mutate(obj)
	if equality.Semantic.DeepEqual(orig, obj) {
		return false, nil
	}
	return true, c.Status().Update(ctx, obj)
}
