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

package steadytest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
)

// malformed is one bad object, or one bad change to a good one. Exactly one
// of refused and reason is set: refused is what the API server's refusal
// says; reason (with detail in its message) is what a condition or an event
// of the object says once a manager has seen it.
type malformed struct {
	name    string
	obj     client.Object
	write   func(ctx context.Context) error
	refused string
	reason  string
	detail  string
}

// TestMalformedInputIsRefusedOrExplained tries many malformed objects with
// both managers and MetalLB running: each is refused at admission or gets a
// condition or event saying what is wrong, and the bound claim and the
// Service carrying its address are left exactly as they were. The Services
// the driver refuses for any backend are the contract's ("refusal/every
// request the driver cannot honour"); the ones here are refused by MetalLB,
// or name a claim another driver serves, in the same barrage.
func TestMalformedInputIsRefusedOrExplained(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()

	// What must not be disturbed: a claim of a MetalLB class carried by a
	// Service, and a claim of a class no driver serves, bound by hand.
	ns, class, v4, addr := mt.ClaimedAndHeld(t, g)
	mt.Kit.Create(g, b.Service(ns, "front", b.ForClaim("web")))
	g.Eventually(mt.IngressOf(g, ns, "front"), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
	g.Eventually(func() string {
		return messageOf(mt.Kit.Address(g, addr.Name).Status.Conditions, v1alpha1.ConditionAssociated)
	}, mt.Timeout, mt.Tick).Should(HavePrefix("Carried by Service " + ns + "/front"))
	g.Eventually(mt.Holders(g, addr.Address), mt.Timeout, mt.Tick).Should(Equal([]string{ns + "/front"}), "the hold has let go")
	static := class + "-static"
	mt.Kit.Make(t, g, b.Class(static, "static.drivers.local.sdn.cozystack.io"))
	mt.Kit.Create(g, b.Claim(ns, "static-web", b.OfClass(static)))
	g.Eventually(func() []string { return mt.Kit.Finalizers(g, mt.Kit.Claim(g, ns, "static-web")) }, mt.Timeout, mt.Tick).Should(
		ContainElement(v1alpha1.FinalizerClaimProtection))
	mt.Kit.Make(t, g, b.Address(static+"-a", "192.0.2.1", static, b.PreBound(ns, "static-web")))
	g.Eventually(mt.Kit.StateOfClaim(g, ns, "static-web"), mt.Timeout, mt.Tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
	mt.Kit.Create(g, b.Claim(ns, "unresolved", b.OfClass(class+"-missing")))
	before := snapshot(g, ns, addr.Name, static+"-a")

	cases := append(append(append(append(
		malformedClasses(class, v4),
		malformedClaims(ns, class, addr.Name)...),
		malformedAddresses(ns, static)...),
		malformedServices(ns, addr.Address)...),
		admissionRefusals(ns, class, addr.Name)...)
	g.Expect(len(cases)).To(BeNumerically(">=", 40))
	owner := t // what a case makes is removed once every case has run
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var err error
			switch {
			case tc.write != nil:
				err = tc.write(ctx)
			default:
				mt.Kit.Own(owner, tc.obj)
				err = mt.Client.Create(ctx, tc.obj)
			}
			if tc.refused != "" {
				g.Expect(err).To(HaveOccurred(), "case %d is refused at admission", i)
				g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
				g.Expect(err.Error()).To(ContainSubstring(tc.refused))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Eventually(func() []string { return explanations(g, tc.obj) }, mt.Timeout, mt.Tick).Should(ContainElement(And(
				HavePrefix(tc.reason+": "), ContainSubstring(tc.detail))), "case %d says what is wrong", i)
		})
	}

	// Every bad input has been seen; nothing bound moved.
	g.Consistently(func() boundState { return snapshot(g, ns, addr.Name, static+"-a") }, 3*time.Second, 200*time.Millisecond).
		Should(Equal(before))
	heldOrCarried := mt.Holders(g, addr.Address)()
	g.Expect(heldOrCarried).To(Equal([]string{ns + "/front"}), "only the carrier holds the address")
}

// boundState is everything the malformed inputs must not change.
type boundState struct {
	ClaimPhase, StaticPhase     v1alpha1.IPAddressClaimPhase
	Addresses, StaticAddresses  []v1alpha1.ClaimedAddress
	AddressPhase, StaticAddress v1alpha1.IPAddressPhase
	AssociatedTo                string
	Conflict                    string
	Ingress                     []string
	ResourceVersions            []string
}

func snapshot(g Gomega, ns, name, staticName string) boundState {
	web, staticWeb := mt.Kit.Claim(g, ns, "web"), mt.Kit.Claim(g, ns, "static-web")
	a, sa := mt.Kit.Address(g, name), mt.Kit.Address(g, staticName)
	s := boundState{
		ClaimPhase: web.Status.Phase, StaticPhase: staticWeb.Status.Phase,
		Addresses: web.Status.Addresses, StaticAddresses: staticWeb.Status.Addresses,
		AddressPhase: a.Status.Phase, StaticAddress: sa.Status.Phase,
		Conflict: reasonOf(a.Status.Conditions, v1alpha1.ConditionConflict),
		Ingress:  mt.IngressOf(g, ns, "front")(),
		ResourceVersions: []string{web.ResourceVersion, staticWeb.ResourceVersion, a.ResourceVersion, sa.ResourceVersion,
			mt.Kit.Service(g, ns, "front").ResourceVersion},
	}
	if w := a.Status.AssociatedTo; w != nil {
		s.AssociatedTo = w.Namespace + "/" + w.Name
	}
	return s
}

func reasonOf(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return c.Reason
		}
	}
	return ""
}

func messageOf(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

// explanations lists "reason: message" of every condition of obj and every
// event about it.
func explanations(g Gomega, obj client.Object) []string {
	g.Expect(mt.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var out []string
	var conds []metav1.Condition
	switch o := obj.(type) {
	case *v1alpha1.IPAddressClass:
		conds = o.Status.Conditions
	case *v1alpha1.IPAddressClaim:
		conds = o.Status.Conditions
	case *v1alpha1.IPAddress:
		conds = o.Status.Conditions
	}
	for _, c := range conds {
		out = append(out, c.Reason+": "+c.Message)
	}
	list := &eventsv1.EventList{}
	g.Expect(mt.Client.List(context.Background(), list)).To(Succeed())
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

// classWith is a class of the MetalLB driver with parameters.
func classWith(name, parameters string) *v1alpha1.IPAddressClass {
	return b.Class(name, mt.Provisioner, b.Parameters(parameters))
}

func malformedClasses(bound, boundV4 string) []malformed {
	fresh := func() string { v4, _ := mt.FreshRange(); return v4 }
	base := func() string { return strings.TrimSuffix(fresh(), "0/28") }
	backwards, mixed := base(), base()
	bad := func(i int, parameters, detail string) malformed {
		name := fmt.Sprintf("%s-bad-%d", bound, i)
		return malformed{name: "class: " + detail, obj: classWith(name, parameters), reason: metallb.ReasonInvalidParameters, detail: detail}
	}
	v4 := fresh()
	return []malformed{
		bad(1, `{"addresses": ["`+fresh()+`"], "adresses": []}`, "parameters.adresses: unknown field"),
		bad(2, `{"addresses": ["`+base()+`300/28"]}`, "parameters.addresses[0]"),
		bad(3, `{"addresses": ["`+backwards+`9-`+backwards+`1"]}`, "is backwards"),
		bad(4, `{"addresses": ["`+base()+`1/28"]}`, "has host bits set"),
		bad(5, `{}`, "parameters.addresses is required"),
		bad(6, `{"addresses": ["`+fresh()+`"], "advertisement": {"l2": {}, "bgp": {}}}`, "parameters.advertisement: set exactly one of l2 or bgp"),
		bad(7, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"aggregationLength": 99}}}`, "parameters.advertisement.bgp.aggregationLength: 99 is out of range"),
		bad(8, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"communities": ["70000:1"]}}}`, `"70000:1" is not a community`),
		bad(9, `{"addresses": ["`+fresh()+`"], "advertisement": {"bgp": {"peers": ["Peer_A"]}}}`, `"Peer_A" is not a BGPPeer name`),
		bad(10, `{"addresses": ["`+fresh()+`"], "advertisement": {"l2": {"interfaces": ["a/b"]}}}`, `"a/b" is not a network interface name`),
		bad(11, `{"addresses": "`+fresh()+`"}`, "parameters.addresses: want a list"),
		bad(12, `{"addresses": ["::ffff:`+strings.TrimSuffix(v4, "/28")+`/124"]}`, "IPv4-mapped IPv6"),
		bad(13, `{"addresses": ["`+fresh()+`", "`+mixed+`0-`+mixed+`1/28"]}`, "parameters.addresses[1]"),
		{name: "class: overlapping the bound class's pool", obj: classWith(bound+"-bad-14", `{"addresses": ["`+boundV4+`"]}`),
			reason: metallb.ReasonOverlapsOtherPool, detail: "IPAddressPool metallb-system/" + params.PoolName(bound)},
	}
}

func malformedClaims(ns, class, boundAddress string) []malformed {
	return []malformed{
		{name: "claim: of a class that does not exist", obj: b.Claim(ns, "no-class", b.OfClass(class+"-nowhere")),
			reason: v1alpha1.ReasonClassNotFound, detail: "IPAddressClass " + class + "-nowhere not found"},
		{name: "claim: naming an address that does not exist", obj: b.Claim(ns, "no-address", b.OfClass(class), b.Named("ip-198-18-0-1")),
			reason: v1alpha1.ReasonWaitingForAddress, detail: "Waiting for IPAddress ip-198-18-0-1: it does not exist yet"},
		{name: "claim: naming the address another claim holds", obj: b.Claim(ns, "thief", b.OfClass(class), b.Named(boundAddress)),
			reason: v1alpha1.ReasonWaitingForAddress, detail: "it is bound to claim " + ns + "/web"},
	}
}

func malformedAddresses(ns, static string) []malformed {
	return []malformed{
		{name: "address: pre-bound to a claim that does not exist", obj: b.Address(static+"-ghost", "192.0.2.2", static, b.PreBound(ns, "ghost")),
			reason: v1alpha1.ReasonReleased, detail: "claim " + ns + "/ghost is gone"},
		{name: "address: a second object for a bound address", obj: b.Address(static+"-dup", "192.0.2.1", static),
			reason: v1alpha1.ReasonDuplicate, detail: "IPAddress " + static + "-a already has address 192.0.2.1"},
		{name: "address: pre-bound to a claim of another class", obj: b.Address(static+"-other", "192.0.2.3", static, b.PreBound(ns, "unresolved")),
			reason: v1alpha1.ReasonPreBindingRefused, detail: "the address is of class " + static},
		{name: "address: pre-bound to a claim that already holds its family", obj: b.Address(static+"-second", "192.0.2.4", static, b.PreBound(ns, "static-web")),
			reason: v1alpha1.ReasonPreBindingRefused, detail: "the claim already holds an IPv4 address, " + static + "-a"},
		{name: "address: bound to an earlier claim of a live claim's name", obj: b.Address(static+"-stale", "192.0.2.5", static,
			b.BoundTo(ns, "static-web", types.UID("00000000-0000-0000-0000-000000000001"))),
			reason: v1alpha1.ReasonReleased, detail: "was re-created"},
	}
}

func malformedServices(ns, carried string) []malformed {
	refused := func(name, detail string, opts ...b.ServiceOption) malformed {
		return malformed{name: "service: " + detail, obj: b.Service(ns, name, opts...), reason: v1alpha1.EventAssociationRefused, detail: detail}
	}
	return []malformed{
		refused("names-static", "IPAddressClaim static-web is served by static.drivers.local.sdn.cozystack.io", b.ForClaim("static-web")),
		{name: "service: pinned by hand to the carried address", obj: b.Service(ns, "pinned-thief", b.PinnedByHand(carried)),
			reason: "AllocationFailed", detail: fmt.Sprintf("Failed to allocate IP for %q", ns+"/pinned-thief")},
	}
}

// admissionRefusals are malformed objects and changes the API server refuses.
func admissionRefusals(ns, class, boundAddress string) []malformed {
	addr := func(name, ip string, opts ...b.AddressOption) *v1alpha1.IPAddress {
		return b.Address(class+"-"+name, ip, class, opts...)
	}
	refuse := func(what string, obj client.Object, msg string) malformed {
		return malformed{name: "refused: " + what, obj: obj, refused: msg}
	}
	change := func(what string, obj client.Object, mutate func(client.Object), msg string) malformed {
		return malformed{name: "refused: " + what, obj: obj, refused: msg, write: func(ctx context.Context) error {
			if err := mt.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			mutate(obj)
			return mt.Client.Update(ctx, obj)
		}}
	}
	const ipMsg = "must be a valid IPv4 or IPv6 address"
	bound := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: boundAddress}}
	onBound := func(f func(a *v1alpha1.IPAddress)) func(client.Object) {
		return func(o client.Object) { f(o.(*v1alpha1.IPAddress)) }
	}
	web := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	boundClass := &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: class}}
	return []malformed{
		refuse("address that is not an IP", addr("r1", "not-an-ip"), ipMsg),
		refuse("IPv4 address out of range", addr("r2", "198.18.0.256"), ipMsg),
		refuse("address with a prefix", addr("r3", "198.18.0.3/32"), ipMsg),
		refuse("IPv4 address with leading zeros", addr("r4", "198.18.0.04"), ipMsg),
		refuse("IPv6 address with a zone", addr("r5", "fe80::5%eth0"), ipMsg),
		refuse("IPv6 address not in canonical form", addr("r6", "2001:DB8:0:0::6"), "canonical form"),
		refuse("empty address", addr("r7", ""), "spec.address"),
		refuse("source with both members", addr("r8", "198.18.0.8", func(a *v1alpha1.IPAddress) {
			a.Spec.Source.ProviderRef = &v1alpha1.ProviderReference{ID: "r-8"}
		}), "exactly one of fromClass or providerRef"),
		refuse("source with neither member", addr("r9", "198.18.0.9", func(a *v1alpha1.IPAddress) { a.Spec.Source = v1alpha1.AddressSource{} }),
			"exactly one of fromClass or providerRef"),
		refuse("address without a class", addr("r10", "198.18.0.10", func(a *v1alpha1.IPAddress) { a.Spec.ClassName = "" }), "spec.className"),
		refuse("address reclaim policy unknown", addr("r11", "198.18.0.11", b.Reclaim("Recycle")), `supported values: "Retain", "Delete"`),
		refuse("claimRef to a bad namespace", addr("r12", "198.18.0.12", b.PreBound("Tenant_A", "web")), "must be a namespace name"),
		refuse("class reclaim policy unknown", b.Class(class+"-r13", mt.Provisioner, b.ClassReclaim("Recycle")), `supported values: "Retain", "Delete"`),
		refuse("class without a provisioner", b.Class(class+"-r14", ""), "spec.provisioner"),
		refuse("negative releaseDelay", b.Class(class+"-r15", mt.Provisioner, b.ReleaseDelay(-time.Minute)), "must be a non-negative duration"),
		refuse("claim family unknown", b.Claim(ns, "r16", b.Family("IPv5")), `supported values: "IPv4", "IPv6", "Dual"`),
		refuse("claim addressName not an object name", b.Claim(ns, "r17", b.Named("IP_198.18.0.17")), "must be the name of an IPAddress"),
		refuse("claim addressName with family Dual", b.Claim(ns, "r18", b.Family(v1alpha1.Dual), b.Named("ip-198-18-0-18")), "cannot be combined with family Dual"),
		refuse("claim className not an object name", b.Claim(ns, "r19", b.OfClass("Public Pool")), "must be the name of an IPAddressClass"),
		change("changing a bound address's spec.address", bound, onBound(func(a *v1alpha1.IPAddress) { a.Spec.Address = "198.18.0.20" }),
			"spec.address is immutable"),
		change("changing a bound address's class", bound, onBound(func(a *v1alpha1.IPAddress) { a.Spec.ClassName = class + "-other" }),
			"spec.className is immutable"),
		change("changing a bound address's source", bound, onBound(func(a *v1alpha1.IPAddress) {
			a.Spec.Source = v1alpha1.AddressSource{ProviderRef: &v1alpha1.ProviderReference{ID: "r-22"}}
		}), "spec.source is immutable"),
		change("clearing a bound address's claimRef", bound, onBound(func(a *v1alpha1.IPAddress) { a.Spec.ClaimRef = nil }), "cannot be cleared"),
		change("pointing a bound address at another claim", bound, onBound(func(a *v1alpha1.IPAddress) { a.Spec.ClaimRef.Name = "other" }),
			"cannot be pointed at another claim"),
		change("changing a bound claim's family", web, func(o client.Object) { o.(*v1alpha1.IPAddressClaim).Spec.Family = v1alpha1.IPv6 },
			"spec.family is immutable"),
		change("changing a class's provisioner", boundClass, func(o client.Object) {
			o.(*v1alpha1.IPAddressClass).Spec.Provisioner = "other.drivers.local.sdn.cozystack.io"
		}, "spec.provisioner is immutable"),
	}
}
