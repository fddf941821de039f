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

package controllers

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// base is what the driver's reconcilers share.
type base struct {
	client.Client
	// live reads from the API server, past the cache.
	live        client.Reader
	backend     driver.Backend
	provisioner string
	recorder    recorder.EventRecorder
	clock       clock.PassiveClock
	metrics     *metrics
	// sharer is the backend's shared handoff, nil where it has none or the
	// gap handoff is forced.
	sharer driver.Sharer
	// retrier asks the backend again for a pin it refused; nil where the
	// backend retries by itself.
	retrier driver.Retrier
	// gate says when the backend may be changed; nil where it always may.
	gate driver.Gate
	// carrierFinalizer keeps a Service that carries addresses by a shared
	// handoff until the hold is back.
	carrierFinalizer string
	ingress          *ingressLog
}

// inLedger says whether an IPAddress records ip.
func (d *base) inLedger(ip string) bool {
	list := &v1alpha1.IPAddressList{}
	if err := d.List(context.Background(), list, client.MatchingFields{indexAddressByIP: ip}, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	return len(list.Items) > 0
}

// reporters are the Services whose load balancer reports ip.
func (d *base) reporters(ctx context.Context, ip string) ([]*corev1.Service, error) {
	list := &corev1.ServiceList{}
	if err := d.List(ctx, list, client.MatchingFields{indexServiceByIngressIP: ip}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Service, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// waiting tells obj's owner, by an event, that the pass err ended on waits
// for the backend's Gate (nothing when err is anything else).
func (d *base) waiting(obj runtime.Object, action string, err error) {
	if errors.Is(err, driver.ErrNotReady) {
		d.recorder.Eventf(obj, nil, corev1.EventTypeNormal, v1alpha1.EventWaitingForBackend, action,
			"%v; this resumes by itself once the backend is ready", err)
	}
}

// servedClass returns the class if it exists and this driver serves it.
func (d *base) servedClass(ctx context.Context, name string) (*v1alpha1.IPAddressClass, error) {
	class := &v1alpha1.IPAddressClass{}
	if err := d.Get(ctx, client.ObjectKey{Name: name}, class); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if class.Spec.Provisioner != d.provisioner {
		return nil, nil
	}
	return class, nil
}

// boundAddresses returns the addresses bound to claim (claimRef with its
// UID), IPv4 first.
func (d *base) boundAddresses(ctx context.Context, claim *v1alpha1.IPAddressClaim) ([]*v1alpha1.IPAddress, error) {
	list := &v1alpha1.IPAddressList{}
	if err := d.List(ctx, list, client.MatchingFields{indexAddressByClaim: claim.ClaimKey()}); err != nil {
		return nil, err
	}
	var out []*v1alpha1.IPAddress
	for i := range list.Items {
		if a := &list.Items[i]; a.Spec.ClaimRef.UID == claim.UID && a.Family() != "" {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *v1alpha1.IPAddress) int {
		if c := strings.Compare(string(a.Family()), string(b.Family())); c != 0 {
			return c // "IPv4" < "IPv6"
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// ips returns the addresses of as, in order.
func ips(as []*v1alpha1.IPAddress) []netip.Addr {
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if ip, err := a.IP(); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

// patchAddressStatus applies mutate to a copy of a's status and writes it if
// anything changed, with the resourceVersion it was computed from: a
// concurrent write by the core fails the patch instead of being lost.
func (d *base) patchAddressStatus(ctx context.Context, a *v1alpha1.IPAddress, mutate func(*v1alpha1.IPAddressStatus)) error {
	_, err := manager.PatchStatus(ctx, d.Client, a, func(a *v1alpha1.IPAddress) { mutate(&a.Status) })
	return err
}
