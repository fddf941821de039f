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

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// MetalLB lets two Services share an address only when both carry the same
// allow-shared-ip key, their ports (protocol and number) do not overlap, and
// their backend keys are equal: the backend key is empty for
// externalTrafficPolicy Cluster, and the Service's selector for Local
// (go.universe.tf/metallb v0.15.2, internal/allocator and k8salloc). A hold
// is selectorless, with traffic policy Cluster and the one port
// placeholder.Port, so a workload can share with it unless it has traffic
// policy Local with a selector, or uses placeholder.Port itself.

// SharingKey is the allow-shared-ip key of a claim's addresses (see
// placeholder.Secret.ClaimKey).
func (b *Backend) SharingKey(ctx context.Context, claim *v1alpha1.IPAddressClaim) (string, error) {
	return b.secret.ClaimKey(ctx, claim)
}

// SharedKey is the key the driver wrote on svc, if svc still carries it.
func (b *Backend) SharedKey(svc *corev1.Service) string { return pins.SharedKey(svc) }

// Shareable says whether MetalLB lets svc share an address with a hold.
func (b *Backend) Shareable(svc *corev1.Service) (bool, string, string) {
	if ok, reason, message := pins.HandWritten(svc); !ok {
		return ok, reason, message
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && len(svc.Spec.Selector) > 0 {
		return false, "LocalTrafficPolicy", "externalTrafficPolicy is Local with a selector; MetalLB shares an address only between Services with the same selector under that policy"
	}
	return placeholder.PortFree(svc)
}

// Releasing: svc carries the withdrawn mark the driver computed for it, or
// is an allocation placeholder giving back an address it was offered.
func (b *Backend) Releasing(svc *corev1.Service) bool {
	if b.Set.IsAllocation(svc) && svc.Annotations[v1alpha1.AnnotationYieldedTo] != "" {
		return true
	}
	return b.secret.IsWithdrawn(svc)
}
