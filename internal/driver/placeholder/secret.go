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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// Secret is what makes the driver's sharing keys and marks unguessable: the
// UID of the placeholder namespace, which tenants cannot read (a namespace is
// cluster-scoped). It is read once, when first needed.
type Secret struct {
	// Reader reads the namespace; the manager's API reader, since the cache
	// holds no namespaces.
	Reader client.Reader
	// Namespace is the placeholder namespace.
	Namespace string
	// Clock tells the time (HoldKey's bound on a late pin); nil means the
	// real clock.
	Clock clock.PassiveClock

	mu  sync.Mutex
	key []byte
}

// get returns the secret, reading it on first use.
func (s *Secret) get(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		ns := &corev1.Namespace{}
		if err := s.Reader.Get(ctx, client.ObjectKey{Name: s.Namespace}, ns); err != nil {
			return nil, fmt.Errorf("reading the placeholder namespace %s: %w", s.Namespace, err)
		}
		s.key = []byte(ns.UID)
	}
	return s.key, nil
}

// Mark derives a label-safe value from the secret and parts.
func (s *Secret) Mark(ctx context.Context, parts ...string) (string, error) {
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

// ClaimKey is the sharing key of a claim's addresses: one key per binding
// (both addresses of a Dual claim carry it, so that a dual-stack workload can
// share them), derived from the claim's UID.
func (s *Secret) ClaimKey(ctx context.Context, claim *v1alpha1.IPAddressClaim) (string, error) {
	return s.sharingKey(ctx, "claim", string(claim.UID))
}

// HoldKey is the sharing key a's hold carries, reading a's claim and the
// Services that report a's address or name its claim through c (the
// manager's cache, with driver.IndexServiceByIngressIP and
// driver.IndexServiceByClaim). While a is bound to a live claim
// (driver.Binding), it is the claim's: a workload of that claim joins the
// hold with it (a shared handoff). Once the binding ended (the claim is
// deleted, or a is Released), it stays the claim's only while the last
// carrier lets go: while a is still associated with it, so that the hold
// comes back sharing the address with it before its pin goes, and while
// it still reports the address, since the allocator would take the address
// from a hold whose key no longer matches that carrier's, and while a pin
// the driver wrote for the binding may still land (latePin). Otherwise it is a
// key of the address's own, which the driver never writes on a workload: a
// former tenant who kept its claim's key (it could read it on its Service)
// cannot share the address with the hold, and the next tenant's claim
// brings a key of its own.
func (s *Secret) HoldKey(ctx context.Context, c client.Reader, a *v1alpha1.IPAddress) (string, error) {
	ref := a.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return s.sharingKey(ctx, "address", string(a.UID))
	}
	claims, err := s.claimKeeps(ctx, c, a)
	if err != nil {
		return "", err
	}
	if !claims {
		return s.sharingKey(ctx, "address", string(a.UID))
	}
	return s.sharingKey(ctx, "claim", string(ref.UID))
}

// claimKeeps says whether the hold of a, bound to a claim, keeps sharing
// that claim's key (see HoldKey).
func (s *Secret) claimKeeps(ctx context.Context, c client.Reader, a *v1alpha1.IPAddress) (bool, error) {
	if a.Status.AssociatedTo != nil {
		return true, nil
	}
	if a.Status.Phase != v1alpha1.AddressReleased {
		if live, _, err := driver.Binding(ctx, c, a); err != nil || live {
			return live, err
		}
	}
	reporters := &corev1.ServiceList{}
	if err := c.List(ctx, reporters, client.MatchingFields{driver.IndexServiceByIngressIP: a.Spec.Address}); err != nil {
		return false, err
	}
	for i := range reporters.Items {
		if s.IsWithdrawn(&reporters.Items[i]) {
			return true, nil
		}
	}
	return s.latePin(ctx, c, a)
}

// latePin says whether a pin the driver wrote for a's ended binding may
// still land (driver.LatePinGrace): within the grace, a Service that named
// the claim before the association ended still carries the driver's record
// of the claim's key. A Service made later, or one with no such record, is
// no reason: a former tenant cannot keep the key by naming the claim again.
func (s *Secret) latePin(ctx context.Context, c client.Reader, a *v1alpha1.IPAddress) (bool, error) {
	left, ended := driver.LatePinGraceLeft(a, s.now())
	if left == 0 {
		return false, nil
	}
	ref := a.Spec.ClaimRef
	key, err := s.sharingKey(ctx, "claim", string(ref.UID))
	if err != nil {
		return false, err
	}
	named := &corev1.ServiceList{}
	if err := c.List(ctx, named, client.MatchingFields{driver.IndexServiceByClaim: ref.Namespace + "/" + ref.Name}); err != nil {
		return false, err
	}
	for i := range named.Items {
		svc := &named.Items[i]
		if svc.Annotations[v1alpha1.AnnotationSharedBy] == key && !svc.CreationTimestamp.After(ended) {
			return true, nil
		}
	}
	return false, nil
}

func (s *Secret) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

func (s *Secret) sharingKey(ctx context.Context, parts ...string) (string, error) {
	m, err := s.Mark(ctx, parts...)
	if err != nil {
		return "", err
	}
	return "iad-" + m, nil
}

// Withdrawn is the value of v1alpha1.LabelWithdrawn the driver writes on svc.
func (s *Secret) Withdrawn(ctx context.Context, svc *corev1.Service) (string, error) {
	return s.Mark(ctx, "withdrawn", string(svc.UID))
}

// IsWithdrawn reports whether svc carries the withdrawn mark the driver
// computed for it.
func (s *Secret) IsWithdrawn(svc *corev1.Service) bool {
	value := svc.Labels[v1alpha1.LabelWithdrawn]
	if value == "" {
		return false
	}
	want, err := s.Withdrawn(context.Background(), svc)
	return err == nil && value == want
}
