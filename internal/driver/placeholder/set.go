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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/keymutex"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// Field indexes of placeholder Services (in the placeholder namespace only).
const (
	IndexByAddress  = "placeholder.byAddress"
	IndexByClaimUID = "placeholder.byClaimUID"
)

// Set is a backend's placeholders: the Services in one namespace that carry
// v1alpha1.LabelPlaceholder. Only what is in that namespace counts; the
// labels alone are forgeable.
type Set struct {
	// Client reads from the manager's cache and writes placeholders; a
	// backend may wrap the manager's client (MetalLB's gate does).
	Client client.Client
	// Namespace holds the placeholders. Tenants must not be able to write
	// to it.
	Namespace string
	// Labels are put on every placeholder the Set builds: the backend's
	// mark, and what its pools select.
	Labels map[string]string
	// Pin is the annotation that pins a Service to its address in the
	// backend (e.g. metallb.io/loadBalancerIPs).
	Pin string
	// Allocator names the allocator in messages ("MetalLB").
	Allocator string

	deleted Deletions
	// holding lets one pass at a time make an address's hold: the claim's
	// and the address's passes often do it at once, from the same cache.
	holding     keymutex.KeyMutex
	holdingInit sync.Once
}

// holdLocks is how many locks the addresses' names are hashed to: more than
// the passes that can run at once, so that two addresses rarely wait for
// each other.
const holdLocks = 64

// lockHold waits until no other pass makes the hold of the address named
// name, and returns what lets the next one go.
func (s *Set) lockHold(name string) (unlock func()) {
	s.holdingInit.Do(func() { s.holding = keymutex.NewHashed(holdLocks) })
	s.holding.LockKey(name)
	return func() { _ = s.holding.UnlockKey(name) }
}

// In reports whether o is one of the Set's placeholders.
func (s *Set) In(o client.Object) bool {
	return o.GetNamespace() == s.Namespace && o.GetLabels()[v1alpha1.LabelPlaceholder] != ""
}

// IsAllocation reports whether o is an allocation placeholder of the Set.
func (s *Set) IsAllocation(o client.Object) bool {
	return o.GetNamespace() == s.Namespace && o.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderAllocation
}

// New is a selectorless, single-stack LoadBalancer Service with no node
// ports, in the Set's namespace: the allocator gives it an address but, with
// no endpoints, nothing answers on it.
func (s *Set) New(name, class string, family v1alpha1.IPFamily) *corev1.Service {
	ipFamily := corev1.IPv4Protocol
	if family == v1alpha1.IPv6 {
		ipFamily = corev1.IPv6Protocol
	}
	labels := map[string]string{v1alpha1.LabelClass: class, v1alpha1.LabelFamily: string(family)}
	maps.Copy(labels, s.Labels)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name, Labels: labels, Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			IPFamilyPolicy:                ptr.To(corev1.IPFamilyPolicySingleStack),
			IPFamilies:                    []corev1.IPFamily{ipFamily},
			Ports:                         []corev1.ServicePort{{Name: "placeholder", Port: Port, Protocol: corev1.ProtocolTCP}},
		},
	}
}

// NewAllocation is the allocation placeholder of claim for family: it asks
// the allocator for a new address of class.
func (s *Set) NewAllocation(claim *v1alpha1.IPAddressClaim, class string, family v1alpha1.IPFamily) *corev1.Service {
	ph := s.New(AllocationName(claim.UID, family), class, family)
	ph.Labels[v1alpha1.LabelPlaceholder] = v1alpha1.PlaceholderAllocation
	ph.Labels[v1alpha1.LabelClaimUID] = string(claim.UID)
	ph.Annotations[v1alpha1.AnnotationClaim] = claim.ClaimKey()
	return ph
}

// MarkHold makes ph the hold of a: it names the address and hands its
// lifecycle to the IPAddress (the garbage collector deletes it with a).
// What steers the allocator to the address is the backend's to add.
func MarkHold(ph *corev1.Service, a *v1alpha1.IPAddress) {
	ph.Labels[v1alpha1.LabelPlaceholder] = v1alpha1.PlaceholderHold
	ph.Labels[v1alpha1.LabelAddress] = AddressKey(a.Name)
	ph.Annotations[v1alpha1.AnnotationAddressName] = a.Name
	if !slices.ContainsFunc(ph.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == a.UID }) {
		ph.OwnerReferences = append(ph.OwnerReferences,
			metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "IPAddress", Name: a.Name, UID: a.UID})
	}
}

// Of lists the placeholders of an address from the cache, those being
// deleted only when asked, and never one this process has just deleted and
// the cache still shows.
func (s *Set) Of(ctx context.Context, addressName string, deleting bool) ([]*corev1.Service, error) {
	list := &corev1.ServiceList{}
	if err := s.Client.List(ctx, list, client.InNamespace(s.Namespace),
		client.MatchingFields{IndexByAddress: AddressKey(addressName)}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Service, 0, len(list.Items))
	for i := range list.Items {
		if ph := &list.Items[i]; deleting || ph.DeletionTimestamp == nil && !s.deleted.Recent(ph.UID, time.Now()) {
			out = append(out, ph)
		}
	}
	return out, nil
}

// Delete deletes ph once: a second pass that still finds it in the cache,
// right after this process deleted it, sends nothing.
func (s *Set) Delete(ctx context.Context, ph *corev1.Service) error {
	if !s.deleted.Begin(ph.UID, time.Now()) {
		return nil
	}
	if err := s.Client.Delete(ctx, ph, client.Preconditions{UID: &ph.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		s.deleted.Forget(ph.UID)
		return err
	}
	return nil
}

// Indexes registers the Set's field indexes on Services.
func (s *Set) Indexes(ctx context.Context, idx client.FieldIndexer) error {
	if err := idx.IndexField(ctx, &corev1.Service{}, IndexByAddress, func(o client.Object) []string {
		if key := o.GetLabels()[v1alpha1.LabelAddress]; key != "" && s.In(o) {
			return []string{key}
		}
		return nil
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &corev1.Service{}, IndexByClaimUID, s.allocationClaimUID)
}

// allocationClaimUID is what IndexByClaimUID files a Service under: the
// claim of an allocation placeholder. Holds carry their claim's UID too, but
// nothing looks them up by it, and leaving them out keeps the index small:
// a cluster has a hold for every address and few allocations in flight.
func (s *Set) allocationClaimUID(o client.Object) []string {
	if uid := o.GetLabels()[v1alpha1.LabelClaimUID]; uid != "" && s.IsAllocation(o) {
		return []string{uid}
	}
	return nil
}

// Placeholders is a predicate that lets only the Set's placeholders through.
func (s *Set) Placeholders() predicate.Predicate {
	return predicate.NewPredicateFuncs(s.In)
}

// AllocationsOfClaim maps a claim to its allocation placeholders (not to
// its holds).
func (s *Set) AllocationsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	return manager.RequestsByIndex(ctx, s.Client, &corev1.ServiceList{}, IndexByClaimUID, string(o.GetUID()),
		client.InNamespace(s.Namespace))
}

// ClaimOf maps a placeholder to the claim it provisions for.
func ClaimOf(_ context.Context, o client.Object) []reconcile.Request {
	if ns, name, ok := SplitKey(o.GetAnnotations()[v1alpha1.AnnotationClaim]); ok {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
	}
	return nil
}

// AddressOf maps a placeholder to the IPAddress it holds.
func AddressOf(_ context.Context, o client.Object) []reconcile.Request {
	if name := o.GetAnnotations()[v1alpha1.AnnotationAddressName]; name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	return nil
}

// CarrierOf maps a placeholder to the Service its address is associated
// with, if any.
func (s *Set) CarrierOf(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[v1alpha1.AnnotationAddressName]
	if name == "" {
		return nil
	}
	a := &v1alpha1.IPAddress{}
	if err := s.Client.Get(ctx, client.ObjectKey{Name: name}, a); err != nil {
		return nil
	}
	if w := a.Status.AssociatedTo; w != nil {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: w.Namespace, Name: w.Name}}}
	}
	return nil
}

// IngressOfFamily is the address of family that the allocator reports on
// svc.
func IngressOfFamily(svc *corev1.Service, family v1alpha1.IPFamily) (netip.Addr, bool) {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil && v1alpha1.FamilyOf(ip) == family {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// EqualMeta reports whether two copies of a Service carry the same labels,
// annotations and owners.
func EqualMeta(a, b *corev1.Service) bool {
	return fmt.Sprint(a.Labels) == fmt.Sprint(b.Labels) && fmt.Sprint(a.Annotations) == fmt.Sprint(b.Annotations) &&
		fmt.Sprint(a.OwnerReferences) == fmt.Sprint(b.OwnerReferences)
}

// Watches are the framework's controllers' event sources on the Set's
// placeholders: a placeholder's change wakes the claim it provisions for and
// the address it holds, and a hold that goes, or that the allocator serves,
// wakes the pass of the Service its address is associated with (a hold gone
// lets the carrier be pinned; a hold served lets a carrier that waits for it
// let go). A backend adds its own.
func (s *Set) Watches() driver.Watches {
	placeholders := s.Placeholders()
	assigned := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return fmt.Sprint(e.ObjectOld.(*corev1.Service).Status.LoadBalancer) != fmt.Sprint(e.ObjectNew.(*corev1.Service).Status.LoadBalancer)
	}}
	return driver.Watches{
		Claims: []driver.Watch{{Object: &corev1.Service{}, Predicates: []predicate.Predicate{placeholders},
			Handler: handler.EnqueueRequestsFromMapFunc(ClaimOf)}},
		Addresses: []driver.Watch{{Object: &corev1.Service{}, Predicates: []predicate.Predicate{placeholders},
			Handler: handler.EnqueueRequestsFromMapFunc(AddressOf)}},
		Services: []driver.Watch{{Object: &corev1.Service{},
			Predicates: []predicate.Predicate{placeholders, predicate.Or[client.Object](manager.DeleteOnly(), assigned)},
			Handler:    handler.EnqueueRequestsFromMapFunc(s.CarrierOf)}},
	}
}
