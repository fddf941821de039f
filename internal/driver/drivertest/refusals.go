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

package drivertest

import (
	"context"
	"maps"
	"net/netip"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// foreignProvisioner serves the class of a claim no backend under test
// serves.
const foreignProvisioner = "other.drivers.local.sdn.cozystack.io"

// refusals: a Service asking for what the driver cannot give it (a claim of
// another namespace, a missing one (or a name no claim can have, or one
// with a trailing space), one with no class resolved, one not Bound, one
// another driver serves, one another Service carries, a Dual claim for a
// single-stack Service; any claim for a Service that is no LoadBalancer; with
// HandPinner, a claim for a Service an admin pinned by hand to another
// address) is refused with a Warning AssociationRefused that says why, gets
// no address and no pin of the driver's, and leaves the carrier with its
// addresses. Passes that refuse the same request again report nothing new:
// the Event API would fold the repeats into a series, a write each.
func refusals(t *testing.T, g *WithT, s *suite, hand HandPinner) {
	ns, other := s.kit.Namespace(t), s.kit.Namespace(t)
	v4, v6 := s.h.Ranges()
	class := s.class(t, g, v1alpha1.ReclaimRetain, v4, v6)
	foreign := class + "-foreign"
	s.claim(g, ns, "web", class, v1alpha1.IPv4)
	s.claim(g, ns, "dual", class, v1alpha1.Dual)
	s.kit.Create(g, b.Claim(ns, "pending", b.OfClass(class), b.Named("ip-does-not-exist")))
	s.kit.Create(g, b.Claim(ns, "unresolved", b.OfClass(class+"-missing")))
	s.kit.Make(t, g, b.Class(foreign, foreignProvisioner), b.Claim(ns, "foreign", b.OfClass(foreign)))
	web := s.bound(g, ns, "web")
	s.held(g, web)
	s.bound(g, ns, "dual")
	g.Eventually(s.kit.StateOfClaim(g, ns, "pending"), timeout, tick).Should(HaveField("Reason", v1alpha1.ReasonWaitingForAddress))
	g.Eventually(func() string { return s.kit.Claim(g, ns, "foreign").Annotations[v1alpha1.AnnotationProvisioner] }, timeout, tick).
		Should(Equal(foreignProvisioner))
	s.kit.Create(g, b.Service(ns, "carrier", b.ForClaim("web")))
	s.carried(g, ns, "carrier", web)

	cases := []struct {
		svc *corev1.Service
		why string
	}{
		{b.Service(other, "elsewhere", b.ForClaim("web")), "IPAddressClaim web not found in namespace " + other},
		{b.Service(ns, "missing", b.ForClaim("nope")), "IPAddressClaim nope not found in namespace " + ns},
		{b.Service(ns, "bad-name", b.ForClaim("Not_A_Name")), "IPAddressClaim Not_A_Name not found"},
		{b.Service(ns, "with-space", b.ForClaim("web ")), "IPAddressClaim web  not found"},
		{b.Service(ns, "unresolved", b.ForClaim("unresolved")), "IPAddressClaim unresolved has no class resolved yet"},
		{b.Service(ns, "unbound", b.ForClaim("pending")), "IPAddressClaim pending is not Bound (phase Pending)"},
		{b.Service(ns, "foreign", b.ForClaim("foreign")), "IPAddressClaim foreign is served by " + foreignProvisioner},
		{b.Service(ns, "second", b.ForClaim("web")), "IPAddressClaim web is already carried by Service " + ns + "/carrier"},
		{b.Service(ns, "single", b.ForClaim("dual")), "but IPAddressClaim dual is Dual"},
		{b.Service(ns, "clusterip", b.ForClaim("web"), b.ClusterIPOnly()), "only a LoadBalancer Service can carry"},
	}
	var handWritten map[string]string
	if hand != nil {
		// An address no class of the cluster has: the backend gives it
		// nobody.
		s.claim(g, ns, "spare", class, v1alpha1.IPv4)
		s.bound(g, ns, "spare")
		svc := b.Service(ns, "pinned-elsewhere", b.ForClaim("spare"))
		hand.PinByHand(svc, class, netip.MustParseAddr("192.0.2.200"))
		handWritten = maps.Clone(svc.Annotations)
		cases = append(cases, struct {
			svc *corev1.Service
			why string
		}{svc, "the driver never overwrites a hand-written pin"})
	}
	for _, tc := range cases {
		s.kit.Create(g, tc.svc)
	}
	for _, tc := range cases {
		g.Eventually(s.kit.EventsAbout(g, tc.svc, v1alpha1.EventAssociationRefused), timeout, tick).Should(
			ContainElement(ContainSubstring(tc.why)), "Service %s/%s", tc.svc.Namespace, tc.svc.Name)
	}
	g.Consistently(func(g Gomega) {
		for _, tc := range cases {
			svc := s.kit.Service(g, tc.svc.Namespace, tc.svc.Name)
			g.Expect(svc.Status.LoadBalancer.Ingress).To(BeEmpty(), "Service %s/%s gets no address", svc.Namespace, svc.Name)
			g.Expect(svc.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPinnedBy), "Service %s/%s gets no pin", svc.Namespace, svc.Name)
		}
		g.Expect(s.kit.Ingress(g, ns, "carrier")()).To(ConsistOf(ips(web)), "the carrier keeps its addresses")
		g.Expect(s.kit.Address(g, web[0].Name).Status.AssociatedTo).To(HaveField("Name", "carrier"))
	}, settle, tick).Should(Succeed())
	if hand != nil {
		for k, v := range handWritten {
			g.Expect(s.kit.Service(g, ns, "pinned-elsewhere").Annotations).To(HaveKeyWithValue(k, v), "the hand-written pin stays")
		}
	}

	missing := s.kit.Service(g, ns, "missing")
	for i := range 3 {
		s.kit.SetAnnotation(g, missing, "example.com/touched", strconv.Itoa(i))
	}
	g.Consistently(s.refusalRepeats(g, missing), settle, tick).Should(Equal([]int32{1}), "a refusal is reported once")
}

// refusalRepeats lists, for each AssociationRefused event about svc, how
// many times it was reported (its series' count, 1 without a series).
func (s *suite) refusalRepeats(g Gomega, svc *corev1.Service) func() []int32 {
	return func() []int32 {
		list := &eventsv1.EventList{}
		g.Expect(s.c.List(context.Background(), list, client.InNamespace(svc.Namespace))).To(Succeed())
		var out []int32
		for _, e := range list.Items {
			if e.Regarding.UID != svc.UID || e.Reason != v1alpha1.EventAssociationRefused {
				continue
			}
			n := int32(1)
			if e.Series != nil {
				n = e.Series.Count
			}
			out = append(out, n)
		}
		return out
	}
}
