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

package placeholder_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// reporting answers the lists of Services by the IP they report from the
// Services it was given, as the manager's cache answers with the driver's
// index; it reads everything else from the API server.
type reporting struct {
	client.Reader
	services []corev1.Service
}

func (r reporting) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*corev1.ServiceList)
	if !ok {
		return r.Reader.List(ctx, list, opts...)
	}
	ip, _ := (&client.ListOptions{}).ApplyOptions(opts).FieldSelector.RequiresExactMatch(driver.IndexServiceByIngressIP)
	l.Items = nil
	for _, svc := range r.services {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP == ip {
				l.Items = append(l.Items, svc)
			}
		}
	}
	return nil
}

// The hold shares its claim's key only while the address is bound to a
// live claim, or, once the binding ended, while the last carrier lets go:
// while the address is still associated with it (the hold comes back
// sharing the address with it before its pin goes) and while it still
// reports the address. Any other time the hold shares a key of the
// address's own: a former tenant who kept its claim's key cannot join it.
func TestTheHoldSharesItsClaimsKeyOnlyWhileTheBindingIsLive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c, err := client.New(testCluster.Config, client.Options{Scheme: manager.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hold-key-"}}
	g.Expect(c.Create(ctx, ns)).To(Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, ns) })

	claim := func(name string, finalizers ...string) *v1alpha1.IPAddressClaim {
		cl := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name, Finalizers: finalizers}}
		g.Expect(c.Create(ctx, cl)).To(Succeed())
		t.Cleanup(func() {
			_ = c.Patch(ctx, cl, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			_ = c.Delete(ctx, cl)
		})
		return cl
	}
	live := claim("live")
	deleting := claim("deleting", "example.com/keep")
	g.Expect(c.Delete(ctx, deleting)).To(Succeed())
	recreated := claim("recreated")

	secret := &placeholder.Secret{Reader: c, Namespace: ns.Name}
	claimKey := func(cl *v1alpha1.IPAddressClaim) string {
		key, err := secret.ClaimKey(ctx, cl)
		g.Expect(err).NotTo(HaveOccurred())
		return key
	}
	ref := func(cl *v1alpha1.IPAddressClaim, uid types.UID) *v1alpha1.ClaimReference {
		return &v1alpha1.ClaimReference{Namespace: cl.Namespace, Name: cl.Name, UID: uid}
	}
	gone := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "gone", UID: "0d1e7e7e-gone"}}
	carrier := &v1alpha1.WorkloadReference{Kind: "Service", Namespace: ns.Name, Name: "web", UID: "0c0ffee0-web"}
	const ip = "192.0.2.9"
	reporter := func(name string, withdrawn bool) corev1.Service {
		svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name, UID: types.UID("0c0ffee0-" + name)},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}}}}}
		if withdrawn {
			mark, err := secret.Withdrawn(ctx, &svc)
			g.Expect(err).NotTo(HaveOccurred())
			svc.Labels = map[string]string{v1alpha1.LabelWithdrawn: mark}
		}
		return svc
	}
	forged := reporter("forged", false)
	forged.Labels = map[string]string{v1alpha1.LabelWithdrawn: "0123456789abcdef01234567"}

	for _, tc := range []struct {
		name       string
		claimRef   *v1alpha1.ClaimReference
		phase      v1alpha1.IPAddressPhase
		associated bool
		reporters  []corev1.Service
		want       *v1alpha1.IPAddressClaim // nil: the address's own key
	}{
		{name: "bound to no claim", phase: v1alpha1.AddressAvailable},
		{name: "pre-bound, not yet accepted", claimRef: ref(live, ""), phase: v1alpha1.AddressPending},
		{name: "bound to a live claim", claimRef: ref(live, live.UID), phase: v1alpha1.AddressBound, want: live},
		{name: "carried for a live claim", claimRef: ref(live, live.UID), phase: v1alpha1.AddressBound, associated: true, want: live},
		{name: "accepted, before the core's pass", claimRef: ref(live, live.UID), want: live},
		{name: "Pending for a live claim", claimRef: ref(live, live.UID), phase: v1alpha1.AddressPending, want: live},
		{name: "Conflict for a live claim", claimRef: ref(live, live.UID), phase: v1alpha1.AddressConflict, want: live},
		{name: "Lost for a live claim", claimRef: ref(live, live.UID), phase: v1alpha1.AddressLost, want: live},
		{name: "Bound, its claim being deleted", claimRef: ref(deleting, deleting.UID), phase: v1alpha1.AddressBound},
		{name: "carried, its claim being deleted", claimRef: ref(deleting, deleting.UID), phase: v1alpha1.AddressBound, associated: true, want: deleting},
		{name: "Bound, its claim gone", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressBound},
		{name: "Conflict, its claim gone", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressConflict},
		{name: "Lost, its claim gone", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressLost},
		{name: "its claim re-created", claimRef: ref(recreated, "0d1e7e7e-earlier"), phase: v1alpha1.AddressBound},
		{name: "Released", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased},
		{name: "Released, still associated", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased, associated: true, want: gone},
		{name: "Released, its carrier letting go", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{reporter("web", true)}, want: gone},
		{name: "Bound, its claim gone, its carrier letting go", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressBound,
			reporters: []corev1.Service{reporter("web", true)}, want: gone},
		{name: "Released, reported by a Service never told to let go", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{reporter("thief", false)}},
		{name: "Released, reported by a Service with a forged mark", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{forged}},
		{name: "unbound, reported by a Service letting go", phase: v1alpha1.AddressAvailable,
			reporters: []corev1.Service{reporter("web", true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			a := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "ip-192-0-2-9", UID: "0a0a0a0a-address"},
				Spec:   v1alpha1.IPAddressSpec{Address: ip, ClaimRef: tc.claimRef},
				Status: v1alpha1.IPAddressStatus{Phase: tc.phase}}
			if tc.associated {
				a.Status.AssociatedTo = carrier
			}
			r := reporting{Reader: c, services: tc.reporters}
			key, err := secret.HoldKey(ctx, r, a)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(key).To(HavePrefix("iad-"))
			if tc.want == nil {
				for _, cl := range []*v1alpha1.IPAddressClaim{live, deleting, recreated, gone} {
					g.Expect(key).NotTo(Equal(claimKey(cl)), "the key of claim %s", cl.Name)
				}
				unbound := a.DeepCopy()
				unbound.Spec.ClaimRef, unbound.Status = nil, v1alpha1.IPAddressStatus{}
				g.Expect(secret.HoldKey(ctx, r, unbound)).To(Equal(key), "one key of the address's own, whatever its binding")
				return
			}
			g.Expect(key).To(Equal(claimKey(tc.want)))
		})
	}
}
