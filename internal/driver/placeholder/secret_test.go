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
	"time"

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

// reporting answers the lists of Services by the IP they report, or by the
// claim they name, from the Services it was given, as the manager's cache
// answers with the driver's indexes; it reads everything else from the API
// server.
type reporting struct {
	client.Reader
	services []corev1.Service
}

func (r reporting) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*corev1.ServiceList)
	if !ok {
		return r.Reader.List(ctx, list, opts...)
	}
	fields := (&client.ListOptions{}).ApplyOptions(opts).FieldSelector
	l.Items = nil
	if claim, ok := fields.RequiresExactMatch(driver.IndexServiceByClaim); ok {
		for _, svc := range r.services {
			if svc.Namespace+"/"+svc.Annotations[v1alpha1.AnnotationIPAddressClaim] == claim {
				l.Items = append(l.Items, svc)
			}
		}
		return nil
	}
	ip, _ := fields.RequiresExactMatch(driver.IndexServiceByIngressIP)
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
	// pinned is a Service naming gone, made at made, that carries no
	// address yet and, where recorded, the driver's record of gone's key.
	now := time.Now()
	pinned := func(name string, made time.Time, recorded bool) corev1.Service {
		svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name, UID: types.UID("0c0ffee0-" + name),
			CreationTimestamp: metav1.NewTime(made),
			Annotations:       map[string]string{v1alpha1.AnnotationIPAddressClaim: gone.Name}}}
		if recorded {
			svc.Annotations[v1alpha1.AnnotationSharedBy] = claimKey(gone)
		}
		return svc
	}

	for _, tc := range []struct {
		name       string
		claimRef   *v1alpha1.ClaimReference
		phase      v1alpha1.IPAddressPhase
		associated bool
		reporters  []corev1.Service
		// ended: how long ago the association ended (the Associated
		// condition turned False); zero for no such condition.
		ended time.Duration
		want  *v1alpha1.IPAddressClaim // nil: the address's own key
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
		{name: "Released, its former carrier's pin still landing", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{pinned("web", now.Add(-time.Hour), true)}, ended: 10 * time.Second, want: gone},
		{name: "Released, its former carrier pinned past the grace", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{pinned("web", now.Add(-time.Hour), true)}, ended: 2 * time.Minute},
		{name: "Released, its claim named by a Service made after the association ended", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{pinned("reuse", now, true)}, ended: 10 * time.Second},
		{name: "Released, its claim named by a Service without the driver's record", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			reporters: []corev1.Service{pinned("web", now.Add(-time.Hour), false)}, ended: 10 * time.Second},
		{name: "Released, its association ended lately, no Service names its claim", claimRef: ref(gone, gone.UID), phase: v1alpha1.AddressReleased,
			ended: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			a := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "ip-192-0-2-9", UID: "0a0a0a0a-address"},
				Spec:   v1alpha1.IPAddressSpec{Address: ip, ClaimRef: tc.claimRef},
				Status: v1alpha1.IPAddressStatus{Phase: tc.phase}}
			if tc.associated {
				a.Status.AssociatedTo = carrier
			}
			if tc.ended > 0 {
				a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionAssociated, Status: metav1.ConditionFalse,
					Reason: driver.ReasonNotAssociated, LastTransitionTime: metav1.NewTime(now.Add(-tc.ended))}}
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
