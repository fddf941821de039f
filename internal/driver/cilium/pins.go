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
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// Pin labels svc for the pool of the addresses' class, writes
// lbipam.cilium.io/ips (IPv4 first) and the driver's marker with the same
// value, and, for a shared handoff, the holds' sharing key with its record,
// open to the placeholder namespace; it lifts a withdrawal.
func (b *Backend) Pin(ctx context.Context, svc *corev1.Service, addrs []netip.Addr, opts driver.PinOptions) error {
	if len(addrs) == 0 {
		return nil
	}
	class, err := b.classOf(ctx, addrs[0])
	if err != nil {
		return err
	}
	value := placeholder.JoinIPs(addrs)
	annotations := map[string]any{annotationIPs: value, v1alpha1.AnnotationPinnedBy: value}
	if opts.SharingKey != "" {
		annotations[annotationSharingKey] = opts.SharingKey
		annotations[placeholder.AnnotationSharedBy] = opts.SharingKey
		annotations[annotationCrossNamespace] = b.opts.PlaceholderNamespace
	} else if b.SharedKey(svc) != "" {
		annotations[annotationSharingKey] = nil
		annotations[placeholder.AnnotationSharedBy] = nil
		annotations[annotationCrossNamespace] = nil
	}
	meta := map[string]any{
		placeholder.MetaAnnotations: annotations,
		placeholder.MetaLabels:      map[string]any{LabelPool: placeholder.LabelValue(class), placeholder.LabelWithdrawn: nil},
	}
	if opts.Finalizer != "" && !controllerutil.ContainsFinalizer(svc, opts.Finalizer) {
		meta[placeholder.MetaFinalizers] = []string{opts.Finalizer}
	}
	return placeholder.PatchMeta(ctx, b, svc, meta)
}

// classOf is the class of the IPAddress recording ip.
func (b *Backend) classOf(ctx context.Context, ip netip.Addr) (string, error) {
	list := &v1alpha1.IPAddressList{}
	if err := b.List(ctx, list, client.MatchingFields{manager.IndexAddressByIP: ip.String()}); err != nil {
		return "", err
	}
	if len(list.Items) == 0 {
		return "", fmt.Errorf("no IPAddress records %s", ip)
	}
	return list.Items[0].Spec.ClassName, nil
}

// Unpin withdraws a pin the driver wrote: the pool label goes, so that
// LB-IPAM takes the address back (it keeps an address after its pin is gone
// otherwise), with the pin if it is still the one the driver wrote, the
// marker, the sharing key the driver wrote and the finalizer; the Service is
// marked withdrawn until LB-IPAM has let go. A Service the driver never
// pinned is left alone, but for the finalizer.
func (b *Backend) Unpin(ctx context.Context, svc *corev1.Service, finalizer string) error {
	meta := map[string]any{}
	if finalizer != "" && controllerutil.ContainsFinalizer(svc, finalizer) {
		meta[placeholder.MetaRemoveFinalizers] = []string{finalizer}
	}
	if marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]; ok {
		annotations := map[string]any{v1alpha1.AnnotationPinnedBy: nil}
		if svc.Annotations[annotationIPs] == marker {
			annotations[annotationIPs] = nil
		}
		if b.SharedKey(svc) != "" {
			annotations[annotationSharingKey] = nil
			annotations[annotationCrossNamespace] = nil
		}
		if _, ok := svc.Annotations[placeholder.AnnotationSharedBy]; ok {
			annotations[placeholder.AnnotationSharedBy] = nil
		}
		mark, err := b.secret.Withdrawn(ctx, svc)
		if err != nil {
			return err
		}
		meta[placeholder.MetaAnnotations] = annotations
		meta[placeholder.MetaLabels] = map[string]any{LabelPool: nil, placeholder.LabelWithdrawn: mark}
	}
	if len(meta) == 0 {
		return nil
	}
	return placeholder.PatchMeta(ctx, b, svc, meta)
}

// PinnedTo reads the addresses svc is pinned to, from lbipam.cilium.io/ips,
// its alias, or spec.loadBalancerIP, and whether the driver wrote that pin.
func (b *Backend) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) {
	value := svc.Annotations[annotationIPs]
	if value == "" {
		value = svc.Annotations[annotationIPsAlias]
	}
	if value == "" {
		value = svc.Spec.LoadBalancerIP //nolint:staticcheck // still honoured by LB-IPAM
	}
	out := placeholder.SplitIPs(value)
	marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]
	return out, ok && marker == svc.Annotations[annotationIPs] && len(out) > 0
}

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
func (b *Backend) SharedKey(svc *corev1.Service) string {
	key := svc.Annotations[placeholder.AnnotationSharedBy]
	if key == "" || svc.Annotations[annotationSharingKey] != key {
		return ""
	}
	return key
}

// Shareable says whether LB-IPAM lets svc share an address with a hold.
func (b *Backend) Shareable(svc *corev1.Service) (bool, string, string) {
	for _, k := range []string{annotationSharingKey, annotationSharingKeyAlias, annotationCrossNamespace, annotationCrossNamespaceAlias} {
		if _, ok := svc.Annotations[k]; ok && b.SharedKey(svc) == "" {
			return false, "HandWrittenSharingKey", fmt.Sprintf("the Service carries its own %s, which the driver never overwrites", k)
		}
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		return false, "LocalTrafficPolicy", "externalTrafficPolicy is Local; LB-IPAM shares an address only between Services with the same policy, and the driver's hold has Cluster"
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == placeholder.Port && (p.Protocol == corev1.ProtocolTCP || p.Protocol == "") {
			return false, "PortCollision", fmt.Sprintf("the Service uses TCP port %d, the port of the driver's hold", placeholder.Port)
		}
	}
	return true, "", ""
}
