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
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// pins are MetalLB's pin and sharing annotations.
var pins = placeholder.Pins{
	IPs:            annotationLoadBalancerIPs,
	Aliases:        []string{annotationLegacyLoadBalancerIPs},
	SharingKey:     annotationAllowSharedIP,
	SharingAliases: []string{annotationLegacyAllowSharedIP},
}

// Pin writes metallb.io/loadBalancerIPs (IPv4 first) and the driver's
// marker with the same value, the retry token (driver.RetryToken), and, for
// a shared handoff, the holds' allow-shared-ip key with its marker and the
// carrier finalizer; it lifts a withdrawal. Without addresses, it withdraws
// a pin the driver wrote (placeholder.Pins.Unpin), and the retry token with
// it.
func (b *Backend) Pin(ctx context.Context, svc *corev1.Service, p driver.Pin) error {
	if len(p.Addresses) > 0 {
		meta := pins.Pin(svc, p.Addresses, p.SharingKey, p.Finalizer)
		meta[placeholder.MetaAnnotations].(map[string]any)[v1alpha1.AnnotationRetry] = driver.RetryToken(ctx)
		return placeholder.PatchMeta(ctx, b, svc, meta)
	}
	meta, err := pins.Unpin(ctx, b.secret, svc, p.Finalizer)
	if meta == nil {
		return err
	}
	if annotations, ok := meta[placeholder.MetaAnnotations].(map[string]any); ok {
		annotations[v1alpha1.AnnotationRetry] = nil
	}
	return placeholder.PatchMeta(ctx, b, svc, meta)
}

// Retry writes token on svc, or on a's hold when svc is nil, unless it
// carries it already: MetalLB processes a Service again on any change of
// it, and does not retry an allocation it refused until its next full
// reprocessing.
func (b *Backend) Retry(ctx context.Context, a *v1alpha1.IPAddress, svc *corev1.Service, token string) error {
	if svc == nil {
		phs, err := b.Set.Of(ctx, a.Name, false)
		if err != nil || len(phs) == 0 {
			return err
		}
		svc = phs[0]
	}
	if svc.Annotations[v1alpha1.AnnotationRetry] == token {
		return nil
	}
	log.FromContext(ctx).V(1).Info("Asking MetalLB again for a pinned Service", "service", svc.Namespace+"/"+svc.Name, "token", token)
	b.metrics.retries.Inc()
	return placeholder.PatchMeta(ctx, b, svc, map[string]any{placeholder.MetaAnnotations: map[string]any{v1alpha1.AnnotationRetry: token}})
}

// PinnedTo reads the addresses svc is pinned to, from MetalLB's annotation,
// its legacy spelling, or spec.loadBalancerIP, and whether the driver wrote
// that pin.
func (b *Backend) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) { return pins.PinnedTo(svc) }
