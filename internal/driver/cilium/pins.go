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

package cilium

import (
	"context"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

// pins are LB-IPAM's pin and sharing annotations, with a cross-namespace
// grant to the placeholder namespace beside the sharing key.
func (b *Backend) pins() placeholder.Pins {
	return placeholder.Pins{
		IPs:            annotationIPs,
		Aliases:        []string{annotationIPsAlias},
		SharingKey:     annotationSharingKey,
		Grants:         map[string]string{annotationCrossNamespace: b.opts.PlaceholderNamespace},
		SharingAliases: []string{annotationSharingKeyAlias, annotationCrossNamespaceAlias},
	}
}

// Pin labels svc for the pool of the addresses' class, writes
// lbipam.cilium.io/ips (IPv4 first) and the driver's marker with the same
// value, and, for a shared handoff, the holds' sharing key with its record,
// open to the placeholder namespace; it lifts a withdrawal. Without
// addresses, it withdraws a pin the driver wrote (placeholder.Pins.Unpin),
// and the pool label with it: LB-IPAM keeps an address after its pin is
// gone otherwise.
func (b *Backend) Pin(ctx context.Context, svc *corev1.Service, p driver.Pin) error {
	if len(p.Addresses) > 0 {
		meta := b.pins().Pin(svc, p.Addresses, p.SharingKey, p.Finalizer)
		meta[placeholder.MetaLabels].(map[string]any)[v1alpha1.LabelCiliumPool] = placeholder.LabelValue(p.Class.Name)
		return placeholder.PatchMeta(ctx, b, svc, meta)
	}
	meta, err := b.pins().Unpin(ctx, b.secret, svc, p.Finalizer)
	if meta == nil {
		return err
	}
	if labels, ok := meta[placeholder.MetaLabels].(map[string]any); ok {
		labels[v1alpha1.LabelCiliumPool] = nil
	}
	return placeholder.PatchMeta(ctx, b, svc, meta)
}

// PinnedTo reads the addresses svc is pinned to, from lbipam.cilium.io/ips,
// its alias, or spec.loadBalancerIP, and whether the driver wrote that pin.
func (b *Backend) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) { return b.pins().PinnedTo(svc) }

// Releasing: svc carries the withdrawn mark the driver computed for it.
func (b *Backend) Releasing(svc *corev1.Service) bool { return b.secret.IsWithdrawn(svc) }

// LB-IPAM lets two Services share an address only when both carry the same
// sharing key, each allows the other's namespace
// (lbipam.cilium.io/sharing-cross-namespace), no port collides (same number
// and protocol), their externalTrafficPolicy is the same, and, under Local,
// they select the same Pods (github.com/cilium/cilium v1.20.2,
// operator/pkg/lbipam, ServiceView.isCompatible). A hold is selectorless,
// with traffic policy Cluster and the one port placeholder.Port, open to
// every namespace.

// SharingKey is the sharing key of a claim's addresses (see
// placeholder.Secret.ClaimKey).
func (b *Backend) SharingKey(ctx context.Context, claim *v1alpha1.IPAddressClaim) (string, error) {
	return b.secret.ClaimKey(ctx, claim)
}

// SharedKey is the key the driver wrote on svc, if svc still carries it.
func (b *Backend) SharedKey(svc *corev1.Service) string { return b.pins().SharedKey(svc) }

// Shareable says whether LB-IPAM lets svc share an address with a hold.
func (b *Backend) Shareable(svc *corev1.Service) (bool, string, string) {
	if ok, reason, message := b.pins().HandWritten(svc); !ok {
		return ok, reason, message
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		return false, "LocalTrafficPolicy", "externalTrafficPolicy is Local; LB-IPAM shares an address only between Services with the same policy, and the driver's hold has Cluster"
	}
	return placeholder.PortFree(svc)
}
