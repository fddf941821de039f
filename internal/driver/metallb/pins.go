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
	"encoding/json"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Pin writes metallb.io/loadBalancerIPs (IPv4 first) and the driver's
// marker with the same value, and lifts a withdrawal.
func (b *Backend) Pin(ctx context.Context, svc *corev1.Service, addrs []netip.Addr) error {
	value := joinIPs(addrs)
	return b.patchMeta(ctx, svc, map[string]any{
		annotationLoadBalancerIPs:   value,
		v1alpha1.AnnotationPinnedBy: value,
	}, map[string]any{LabelWithdrawn: nil})
}

// Unpin withdraws a pin the driver wrote: the pin goes if it is still the
// one the driver wrote, the marker goes, and the Service is labelled
// withdrawn so that MetalLB takes the address back (it keeps an address
// after its pin is gone otherwise). A Service the driver never pinned is
// left alone.
func (b *Backend) Unpin(ctx context.Context, svc *corev1.Service) error {
	marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]
	if !ok {
		return nil
	}
	annotations := map[string]any{v1alpha1.AnnotationPinnedBy: nil}
	if svc.Annotations[annotationLoadBalancerIPs] == marker {
		annotations[annotationLoadBalancerIPs] = nil
	}
	return b.patchMeta(ctx, svc, annotations, map[string]any{LabelWithdrawn: "true"})
}

// Releasing: the driver withdrew its pin and labelled the Service, so the
// driver's pools refuse it and MetalLB is taking the address back. The label
// cannot help a thief: it is what makes MetalLB take the address away.
func (b *Backend) Releasing(svc *corev1.Service) bool {
	return svc.Labels[LabelWithdrawn] == "true"
}

// PinnedTo reads the addresses svc is pinned to, from MetalLB's annotation,
// its legacy spelling, or spec.loadBalancerIP, and whether the driver wrote
// that pin.
func (b *Backend) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) {
	value := svc.Annotations[annotationLoadBalancerIPs]
	if value == "" {
		value = svc.Annotations[annotationLegacyLoadBalancerIPs]
	}
	if value == "" {
		value = svc.Spec.LoadBalancerIP //nolint:staticcheck // still honoured by MetalLB
	}
	var out []netip.Addr
	for _, s := range strings.Split(value, ",") {
		if ip, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
			out = append(out, ip)
		}
	}
	marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]
	return out, ok && marker == svc.Annotations[annotationLoadBalancerIPs] && len(out) > 0
}

func (b *Backend) patchMeta(ctx context.Context, svc *corev1.Service, annotations, labels map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations, "labels": labels}})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(b.Patch(ctx, svc, client.RawPatch(types.MergePatchType, patch)))
}

func joinIPs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}
