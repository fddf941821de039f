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

package placeholder

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Pins names the annotations through which a backend's Services ask for
// addresses and share them. The keys differ from backend to backend; what
// the driver writes and reads through them does not.
type Pins struct {
	// IPs is the annotation the driver pins with. Aliases are other
	// spellings the backend honours, read after it, and spec.loadBalancerIP
	// after them.
	IPs     string
	Aliases []string
	// SharingKey is the backend's sharing annotation. Grants are written
	// beside it, with their values, while the driver's key stands (LB-IPAM's
	// cross-namespace grant). SharingAliases are other spellings of either,
	// which the driver never writes.
	SharingKey     string
	Grants         map[string]string
	SharingAliases []string
}

// Pin is the metadata patch that pins svc to addrs: the pin and the driver's
// marker with the same value; for a shared handoff (key set) the sharing key,
// its grants and the driver's record of it, otherwise the removal of a key
// the driver wrote; the withdrawal lifted; and the finalizer, if svc lacks it.
func (p Pins) Pin(svc *corev1.Service, addrs []netip.Addr, key, finalizer string) map[string]any {
	value := JoinIPs(addrs)
	annotations := map[string]any{p.IPs: value, v1alpha1.AnnotationPinnedBy: value}
	switch {
	case key != "":
		annotations[p.SharingKey], annotations[v1alpha1.AnnotationSharedBy] = key, key
		for k, v := range p.Grants {
			annotations[k] = v
		}
	case p.SharedKey(svc) != "":
		p.dropSharing(annotations)
	}
	meta := map[string]any{MetaAnnotations: annotations, MetaLabels: map[string]any{v1alpha1.LabelWithdrawn: nil}}
	if finalizer != "" && !controllerutil.ContainsFinalizer(svc, finalizer) {
		meta[MetaFinalizers] = []string{finalizer}
	}
	return meta
}

// Unpin is the metadata patch that withdraws a pin the driver wrote: the pin
// goes if it is still the one the driver wrote, and so do the marker, the
// sharing key the driver wrote and the finalizer; svc is labelled withdrawn
// with the mark s computes for it, so that the backend, which keeps an
// address after its pin is gone, takes it back. A Service the driver never
// pinned is left alone, but for the finalizer. Nil: nothing to write.
func (p Pins) Unpin(ctx context.Context, s *Secret, svc *corev1.Service, finalizer string) (map[string]any, error) {
	meta := map[string]any{}
	if finalizer != "" && controllerutil.ContainsFinalizer(svc, finalizer) {
		meta[MetaRemoveFinalizers] = []string{finalizer}
	}
	if marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]; ok {
		annotations := map[string]any{v1alpha1.AnnotationPinnedBy: nil}
		if svc.Annotations[p.IPs] == marker {
			annotations[p.IPs] = nil
		}
		if p.SharedKey(svc) != "" {
			p.dropSharing(annotations)
		}
		if _, ok := svc.Annotations[v1alpha1.AnnotationSharedBy]; ok {
			annotations[v1alpha1.AnnotationSharedBy] = nil
		}
		mark, err := s.Withdrawn(ctx, svc)
		if err != nil {
			return nil, err
		}
		meta[MetaAnnotations] = annotations
		meta[MetaLabels] = map[string]any{v1alpha1.LabelWithdrawn: mark}
	}
	if len(meta) == 0 {
		return nil, nil
	}
	return meta, nil
}

func (p Pins) dropSharing(annotations map[string]any) {
	annotations[p.SharingKey], annotations[v1alpha1.AnnotationSharedBy] = nil, nil
	for k := range p.Grants {
		annotations[k] = nil
	}
}

// PinnedTo reads the addresses svc is pinned to, and whether the driver
// wrote that pin.
func (p Pins) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) {
	value := svc.Annotations[p.IPs]
	for _, alias := range p.Aliases {
		if value == "" {
			value = svc.Annotations[alias]
		}
	}
	if value == "" {
		value = svc.Spec.LoadBalancerIP //nolint:staticcheck // still honoured by both backends
	}
	out := SplitIPs(value)
	marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]
	return out, ok && marker == svc.Annotations[p.IPs] && len(out) > 0
}

// SharedKey is the sharing key the driver wrote on svc, if svc still
// carries it.
func (p Pins) SharedKey(svc *corev1.Service) string {
	key := svc.Annotations[v1alpha1.AnnotationSharedBy]
	if key == "" || svc.Annotations[p.SharingKey] != key {
		return ""
	}
	return key
}

// HandWritten refuses svc a shared handoff when it carries a sharing
// annotation of its own: the backend's key or a grant while the driver's key
// does not stand, or an alias at all. The driver never overwrites one.
func (p Pins) HandWritten(svc *corev1.Service) (ok bool, reason, message string) {
	own := p.SharedKey(svc) != ""
	for _, k := range append([]string{p.SharingKey}, slices.Sorted(maps.Keys(p.Grants))...) {
		if _, ok := svc.Annotations[k]; ok && !own {
			return false, "HandWrittenSharingKey", fmt.Sprintf("the Service carries its own %s, which the driver never overwrites", k)
		}
	}
	for _, k := range p.SharingAliases {
		if _, ok := svc.Annotations[k]; ok {
			return false, "HandWrittenSharingKey", fmt.Sprintf("the Service carries its own %s, which the driver never overwrites", k)
		}
	}
	return true, "", ""
}

// PortFree refuses svc a shared handoff when it uses the hold's port.
func PortFree(svc *corev1.Service) (ok bool, reason, message string) {
	for _, p := range svc.Spec.Ports {
		if p.Port == Port && (p.Protocol == corev1.ProtocolTCP || p.Protocol == "") {
			return false, "PortCollision", fmt.Sprintf("the Service uses TCP port %d, the port of the driver's hold", Port)
		}
	}
	return true, "", ""
}
