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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// MetalLB lets two Services share an address only when both carry the same
// allow-shared-ip key, their ports (protocol and number) do not overlap, and
// their backend keys are equal: the backend key is empty for
// externalTrafficPolicy Cluster, and the Service's selector for Local
// (go.universe.tf/metallb v0.15.2, internal/allocator and k8salloc). A hold
// is selectorless, with traffic policy Cluster and the one port
// placeholderPort, so a workload can share with it unless it has traffic
// policy Local with a selector, or uses placeholderPort itself.

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// secret is what makes the driver's keys and marks unguessable: the UID of
// the placeholder namespace, which tenants cannot read (a namespace is
// cluster-scoped). It is read once, when first needed.
type secret struct {
	reader client.Reader
	ns     string

	mu  sync.Mutex
	key []byte
}

// get returns the secret, reading it on first use.
func (s *secret) get(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		ns := &corev1.Namespace{}
		if err := s.reader.Get(ctx, client.ObjectKey{Name: s.ns}, ns); err != nil {
			return nil, fmt.Errorf("reading the placeholder namespace %s: %w", s.ns, err)
		}
		s.key = []byte(ns.UID)
	}
	return s.key, nil
}

// mark derives a label-safe value from the secret and parts.
func (s *secret) mark(ctx context.Context, parts ...string) (string, error) {
	key, err := s.get(ctx)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))[:24], nil
}

// SharingKey is the allow-shared-ip key of a claim's addresses: one key per
// binding (both addresses of a Dual claim carry it, so that a dual-stack
// workload can share them), derived from the claim's UID and the secret.
func (b *Backend) SharingKey(ctx context.Context, claim *v1alpha1.IPAddressClaim) (string, error) {
	return b.claimKey(ctx, claim.UID)
}

func (b *Backend) claimKey(ctx context.Context, uid types.UID) (string, error) {
	m, err := b.secret.mark(ctx, "claim", string(uid))
	if err != nil {
		return "", err
	}
	return "iad-" + m, nil
}

// holdKey is the key a's hold carries: its claim's, or, for an address
// bound to no claim, one of its own.
func (b *Backend) holdKey(ctx context.Context, a *v1alpha1.IPAddress) (string, error) {
	if ref := a.Spec.ClaimRef; ref != nil && ref.UID != "" {
		return b.claimKey(ctx, ref.UID)
	}
	m, err := b.secret.mark(ctx, "address", string(a.UID))
	if err != nil {
		return "", err
	}
	return "iad-" + m, nil
}

// SharedKey is the key the driver wrote on svc, if svc still carries it.
func (b *Backend) SharedKey(svc *corev1.Service) string {
	key := svc.Annotations[annotationSharedBy]
	if key == "" || svc.Annotations[annotationAllowSharedIP] != key {
		return ""
	}
	return key
}

// Shareable says whether MetalLB lets svc share an address with a hold.
func (b *Backend) Shareable(svc *corev1.Service) (bool, string, string) {
	if key, ok := svc.Annotations[annotationAllowSharedIP]; ok && key != svc.Annotations[annotationSharedBy] {
		return false, "HandWrittenSharingKey", fmt.Sprintf("the Service carries its own %s key, which the driver never overwrites", annotationAllowSharedIP)
	}
	if _, ok := svc.Annotations[annotationLegacyAllowSharedIP]; ok {
		return false, "HandWrittenSharingKey", fmt.Sprintf("the Service carries its own %s key, which the driver never overwrites", annotationLegacyAllowSharedIP)
	}
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && len(svc.Spec.Selector) > 0 {
		return false, "LocalTrafficPolicy", "externalTrafficPolicy is Local with a selector; MetalLB shares an address only between Services with the same selector under that policy"
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == placeholderPort && (p.Protocol == corev1.ProtocolTCP || p.Protocol == "") {
			return false, "PortCollision", fmt.Sprintf("the Service uses TCP port %d, the port of the driver's hold", placeholderPort)
		}
	}
	return true, "", ""
}

// withdrawnMark is the value of LabelWithdrawn the driver writes on svc:
// only the driver can compute it, so the label exempts from conflict
// detection only a Service the driver really told to let go.
func (b *Backend) withdrawnMark(ctx context.Context, svc *corev1.Service) (string, error) {
	return b.secret.mark(ctx, "withdrawn", string(svc.UID))
}

// Releasing: svc carries the withdrawn mark the driver computed for it, or
// is an allocation placeholder giving back an address it was offered.
func (b *Backend) Releasing(svc *corev1.Service) bool {
	if b.isAllocation(svc) && svc.Annotations[annotationYieldedTo] != "" {
		return true
	}
	value := svc.Labels[LabelWithdrawn]
	if value == "" {
		return false
	}
	want, err := b.withdrawnMark(context.Background(), svc)
	return err == nil && value == want
}
