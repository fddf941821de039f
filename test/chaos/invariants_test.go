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

package main

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
)

// reporting returns a Service of ns whose load balancer reports ips.
func reporting(ns, name string, ips []string, opts ...b.ServiceOption) *corev1.Service {
	s := b.Service(ns, name, opts...)
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return s
}

// keyed sets MetalLB's sharing key on a Service and, when byDriver, the
// driver's record that it wrote that key.
//
//nolint:unparam // The key stays in every case, so that a reader sees which Services share one.
func keyed(key string, byDriver bool) b.ServiceOption {
	return func(s *corev1.Service) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, metallbBackend.sharingKey, key)
		if byDriver {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.AnnotationSharedBy, key)
		}
	}
}

// bound returns a claim Bound to ips.
//
//nolint:unparam // ns mirrors reporting and b.BoundTo, so that a case shows which claim a Service or address names.
func bound(ns, name string, uid types.UID, ips ...string) *v1alpha1.IPAddressClaim {
	c := b.Claim(ns, name)
	c.UID = uid
	c.Status.Phase = v1alpha1.ClaimBound
	for _, ip := range ips {
		c.Status.Addresses = append(c.Status.Addresses, v1alpha1.ClaimedAddress{Name: addressName(ip), Address: ip})
	}
	return c
}

// addressName is the name of the IPAddress of ip in these tests.
func addressName(ip string) string {
	return "ip-" + strings.NewReplacer(".", "-", ":", "-").Replace(ip)
}

// testSecret keys the tests' marks, as a placeholder namespace's UID would.
var testSecret = secret("placeholder-namespace-uid")

// withUID sets a Service's UID, which its withdrawn mark is computed from.
func withUID(uid types.UID) b.ServiceOption { return func(s *corev1.Service) { s.UID = uid } }

// markedWithdrawn labels a Service (give it its UID first) withdrawn with
// its valid mark.
func markedWithdrawn() b.ServiceOption {
	return func(s *corev1.Service) {
		metav1.SetMetaDataLabel(&s.ObjectMeta, v1alpha1.LabelWithdrawn, testSecret.withdrawn(s.UID))
	}
}

// TestCheckerCatchesEachViolation feeds the checker the object sequences
// each invariant forbids, and the ones it allows, and reads its verdicts.
func TestCheckerCatchesEachViolation(t *testing.T) {
	cases := []struct {
		name string
		feed func(c *checker)
		want string // the invariant violated, "" for none
	}{
		{"two Services without a key report one IP", func(c *checker) {
			c.onService(reporting("t", "a", []string{"100.80.0.1"}), false)
			c.onService(reporting("t", "b", []string{"100.80.0.1"}), false)
		}, invTwoServices},
		{"a hold and its carrier share the driver's key", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, keyed("k1", true)), false)
		}, ""},
		{"a workload with a key the driver did not write", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, keyed("k1", false)), false)
		}, invTwoServices},
		{"an allocation placeholder giving the address back", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "alloc", []string{"fd00:210::1"}, withUID("p1"), markedWithdrawn()), false)
			c.onService(reporting("t", "a", []string{"fd00:210:0::1"}), false)
		}, ""},
		{"a withdrawn label with any other value", func(c *checker) {
			c.onService(reporting("t", "a", nil, withUID("s1"), b.WithLabel(v1alpha1.LabelWithdrawn, testSecret.withdrawn("s2"))), false)
		}, invBadMark},
		{"a forged withdrawn label does not excuse a second holder", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{"100.80.0.1"}, withUID("s1"), b.WithLabel(v1alpha1.LabelWithdrawn, "forged")), false)
			c.violations = map[string]Violation{} // the forged mark itself is the case above
			c.checkReporters("100.80.0.1")
		}, invTwoServices},
		{"a former carrier and a new one of the same claim, both keyed by the driver", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
			c.onService(reporting("t", "old", []string{"100.80.0.1"}, keyed("k1", true)), false)
			c.onService(reporting("t", "new", []string{"100.80.0.1"}, keyed("k1", true)), false)
		}, invTwoCarriers},
		{"a former carrier letting go under its mark beside the new one", func(c *checker) {
			c.onService(reporting("t", "old", []string{"100.80.0.1"}, withUID("s1"), markedWithdrawn()), false)
			c.onService(reporting("t", "new", []string{"100.80.0.1"}, keyed("k1", true)), false)
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.1"}, keyed("k1", false)), false)
		}, ""},
		{"a Service gone before the next reports the IP", func(c *checker) {
			c.onService(reporting("t", "a", []string{"100.80.0.1"}), false)
			c.onService(reporting("t", "a", nil), true)
			c.onService(reporting("t", "b", []string{"100.80.0.1"}), false)
		}, ""},
		{"a Bound claim's address changes", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "100.80.0.1"), false)
			c.onClaim(bound("t", "c", "u1", "100.80.0.2"), false)
		}, invClaimChanged},
		{"a Bound claim goes Lost", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "100.80.0.1"), false)
			lost := bound("t", "c", "u1")
			lost.Status.Phase = v1alpha1.ClaimLost
			c.onClaim(lost, false)
		}, invClaimLeft},
		{"a claim being deleted may let go", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "100.80.0.1"), false)
			deleting := bound("t", "c", "u1")
			deleting.DeletionTimestamp = &metav1.Time{}
			c.onClaim(deleting, false)
			c.onClaim(bound("t", "d", "u2", "100.80.0.1"), false)
		}, ""},
		{"two live claims report one address", func(c *checker) {
			c.onClaim(bound("t", "c", "u1", "100.80.0.1"), false)
			c.onClaim(bound("t", "d", "u2", "100.80.0.1"), false)
		}, invTwoClaims},
		{"two IPAddresses bind one IP to two claims", func(c *checker) {
			c.onAddress(b.Address("x", "100.80.16.1", "s", b.BoundTo("t", "c", "u1")), false)
			c.onAddress(b.Address("y", "100.80.16.1", "s", b.BoundTo("t", "d", "u2")), false)
		}, invTwoClaims},
		{"an IPAddress moves to another claim", func(c *checker) {
			c.onAddress(b.Address("x", "100.80.16.1", "s", b.BoundTo("t", "c", "u1")), false)
			c.onAddress(b.Address("x", "100.80.16.1", "s", b.BoundTo("t", "c", "u2")), false)
		}, invRebound},
		{"a placeholder holds an unrecorded IP at the end", func(c *checker) {
			c.onService(reporting(placeholderNamespace, "alloc", []string{"100.80.0.9"}), false)
			c.finalCheck()
		}, invUnrecordedEnd},
		{"a placeholder holds a recorded IP at the end", func(c *checker) {
			c.onAddress(b.Address("x", "100.80.0.9", "m"), false)
			c.onService(reporting(placeholderNamespace, "hold", []string{"100.80.0.9"}), false)
			c.finalCheck()
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker(testSecret)
			tc.feed(c)
			got, _ := c.result()
			wantViolation(t, got, tc.want)
		})
	}
}

// TestProgressConvergesOnlyWhenEverythingIsInPlace reads the convergence
// verdict on a Service that carries its claim's address, one that does not,
// and a stray.
func TestProgressConvergesOnlyWhenEverythingIsInPlace(t *testing.T) {
	c := newChecker(testSecret)
	c.onClaim(bound("t", "c", "u1", "100.80.0.1"), false)
	c.onService(reporting("t", "a", []string{"100.80.0.1"}, b.ForClaim("c")), false)
	if p := c.progress(); !p.converged() {
		t.Fatalf("not converged: %s", p)
	}
	c.onService(reporting("t", "b", nil, b.ForClaim("c")), false)
	if p := c.progress(); p.converged() || p.Carriers != 2 || p.Carrying != 1 {
		t.Errorf("a second Service naming the claim without its address: %s, want 1/2 carrying", p)
	}
	c.onService(reporting("t", "b", nil), true)
	terminating := reporting("t", "a", []string{"100.80.0.1"}, b.ForClaim("c"))
	terminating.DeletionTimestamp = &metav1.Time{}
	c.onService(terminating, false)
	if p := c.progress(); p.converged() || p.ServicesDeleting != 1 {
		t.Errorf("a Service stuck being deleted: %s, want 1 still being deleted", p)
	}
	c.onService(terminating, true)
	c.onService(reporting("t", "stray", []string{"100.80.8.4"}), false)
	if p := c.progress(); p.converged() || p.Stray != 1 || !strings.Contains(p.String(), "t/stray") {
		t.Errorf("a Service naming no claim with a pool address: %s, want 1 stray", p)
	}
}

// clocked is a checker whose clock the test moves, with every party able
// to act from the start.
func clocked() (*checker, func(time.Duration)) {
	now := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
	c := newChecker(testSecret)
	c.now = func() time.Time { return now }
	for _, p := range []party{partyCore, partyDriver, partyAllocator} {
		c.abilities.set(p, true, now)
	}
	c.heldClasses[classDelete], c.heldClasses[classRetain] = true, true
	return c, func(d time.Duration) {
		c.sweep()
		now = now.Add(d)
		c.sweep()
	}
}

// claimOf returns a claim of ns/name with uid, in class, admitted to it,
// asking for family.
func claimOf(name string, uid types.UID, class string, family v1alpha1.IPFamily) *v1alpha1.IPAddressClaim {
	cl := b.Claim("t", name, b.OfClass(class), b.Family(family))
	cl.UID = uid
	cl.Status.AdmittedClassName = class
	return cl
}

// address returns IPAddress name of ip in class with uid, bound to claim
// t/claim of claimUID ("" for none), in phase.
//
//nolint:unparam // uid stays in every case, so that a reader sees which address a key is computed from.
func address(name, ip, class string, uid, claimUID types.UID, reclaim v1alpha1.ReclaimPolicy,
	phase v1alpha1.IPAddressPhase) *v1alpha1.IPAddress {
	var opts []b.AddressOption
	if claimUID != "" {
		opts = append(opts, b.BoundTo("t", "c", claimUID))
	}
	a := b.Address(name, ip, class, append(opts, b.Reclaim(reclaim))...)
	a.UID = uid
	a.Status.Phase = phase
	return a
}

// ledger returns the usage ledger of namespace t for class counting
// entries (claim uid → addresses) with sum written as its total.
//
//nolint:unparam // class mirrors claimOf's, so that a case shows which ledger a claim is counted in.
func ledger(class string, sum int32, entries map[types.UID]int32) *v1alpha1.IPAddressClassUsage {
	l := &v1alpha1.IPAddressClassUsage{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: class}}
	for _, uid := range slices.Sorted(maps.Keys(entries)) {
		l.Spec.Claims = append(l.Spec.Claims, v1alpha1.AdmittedClaim{Name: "claim-" + string(uid), UID: uid, Addresses: entries[uid]})
	}
	l.Spec.Addresses = sum
	return l
}

// waitingForRoom returns claim t/name of classDelete, not admitted, whose
// Bound condition says it waits for room under the class's limit.
func waitingForRoom(name string, uid types.UID, family v1alpha1.IPFamily) *v1alpha1.IPAddressClaim {
	cl := claimOf(name, uid, classDelete, family)
	cl.Status.AdmittedClassName = ""
	cl.Status.Phase = v1alpha1.ClaimPending
	cl.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionBound, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonClassLimitReached}}
	return cl
}

// holdOf returns the hold placeholder of IPAddress name.
//
//nolint:unparam // name mirrors address's, so that a case shows which address the hold holds.
func holdOf(name string, uid types.UID, ips []string, opts ...b.ServiceOption) *corev1.Service {
	return reporting(placeholderNamespace, "hold-"+name, ips, append([]b.ServiceOption{withUID(uid),
		b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold), b.WithLabel(v1alpha1.LabelAddress, name),
		func(s *corev1.Service) {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.AnnotationAddressName, name)
		}}, opts...)...)
}

// staticPair feeds claim t/c (uid u1) of the static class and IPAddress x
// Bound to it with reclaim, and returns both for the case to delete or
// change.
func staticPair(c *checker, reclaim v1alpha1.ReclaimPolicy) (*v1alpha1.IPAddressClaim, *v1alpha1.IPAddress) {
	cl := claimOf("c", "u1", classStatic, v1alpha1.IPv4)
	a := address("x", "100.80.16.1", classStatic, "a1", "u1", reclaim, v1alpha1.AddressBound)
	c.onClaim(cl, false)
	c.onAddress(a, false)
	return cl, a
}

// admitOne limits the Delete class to limit addresses a namespace and feeds
// claim t/c (uid u1, IPv4), admitted to it and counted by the ledger.
func admitOne(c *checker, limit int32) {
	c.limits[classDelete] = limit
	c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
	c.onLedger(ledger(classDelete, 1, map[types.UID]int32{"u1": 1}), false)
}

// releaseOne deletes admitOne's claim as the core lets it go: marked
// deleting, dropped from the ledger (which becomes left), then gone.
func releaseOne(c *checker, left *v1alpha1.IPAddressClassUsage) {
	deleting := claimOf("c", "u1", classDelete, v1alpha1.IPv4)
	deleting.DeletionTimestamp = &metav1.Time{}
	c.onClaim(deleting, false)
	c.onLedger(left, false)
	c.onClaim(deleting, true)
}

// withdrawnBesideHolder feeds an allocation placeholder under its withdrawn
// mark (uid p1) and Service t/a, the carrier of claim t/c Bound to ip,
// both reporting ip.
//
//nolint:unparam // The address stays in every case, so that a reader sees which Services report it.
func withdrawnBesideHolder(c *checker, ip string) {
	c.onClaim(bound("t", "c", "u1", ip), false)
	a := address(addressName(ip), ip, classDelete, "a1", "u1", v1alpha1.ReclaimDelete, v1alpha1.AddressBound)
	a.Status.AssociatedTo = &v1alpha1.WorkloadReference{Kind: "Service", Namespace: "t", Name: "a"}
	c.onAddress(a, false)
	c.onService(reporting(placeholderNamespace, "alloc", []string{ip}, withUID("p1"), markedWithdrawn()), false)
	c.onService(reporting("t", "a", []string{ip}, b.ForClaim("c")), false)
}

// strayBesideHold feeds what a claim's deletion under Retain leaves while
// the driver lets Service t/a go: the claim t/c gone, its IPAddress of ip
// Released, t/a still reporting ip, and the address's hold reporting
// holdIPs.
func strayBesideHold(c *checker, ip string, holdIPs []string) {
	c.onClaim(bound("t", "c", "u1", ip), true)
	c.onAddress(address(addressName(ip), ip, classRetain, "a1", "u1", v1alpha1.ReclaimRetain, v1alpha1.AddressReleased), false)
	key := keyed(testSecret.claimKey("u1"), true)
	c.onService(reporting("t", "a", []string{ip}, withUID("s1"), b.ForClaim("c"), key), false)
	c.onService(holdOf(addressName(ip), "h1", holdIPs, keyed(testSecret.claimKey("u1"), false)), false)
}

// allocationOf returns the allocation placeholder of claim uid, reporting
// ip and labelled with the name of the IPAddress that will record it.
func allocationOf(uid types.UID, ip string) *corev1.Service {
	return reporting(placeholderNamespace, "alloc-"+string(uid)+"-v4", []string{ip}, withUID("p-"+uid),
		b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderAllocation), b.WithLabel(v1alpha1.LabelClaimUID, string(uid)),
		b.WithLabel(v1alpha1.LabelAddress, addressName(ip)))
}

// looks gives c an allocator's log in which MetalLB has looked at no
// Service yet, and returns what makes it look at Service key now.
func looks(c *checker) func(key string) {
	at := map[string]time.Time{}
	c.handled = func(key string, after time.Time) (time.Time, bool) {
		t, ok := at[key]
		return t, ok && !t.Before(after)
	}
	return func(key string) { at[key] = c.now() }
}

// outage takes party p down, feeds during, lets d pass and brings p back.
func outage(c *checker, wait func(time.Duration), p party, d time.Duration, during func()) {
	c.abilities.set(p, false, c.now())
	during()
	wait(d)
	c.abilities.set(p, true, c.now())
}

// TestBoundedInvariants feeds the checker states that may last only a
// while, moves its clock, and reads its verdicts: each is reported once its
// bound has passed with its parties able to act, and not before.
func TestBoundedInvariants(t *testing.T) {
	const ip = "100.80.0.1"
	cases := []struct {
		name string
		feed func(c *checker, wait func(time.Duration))
		want []string // the invariants violated, each at least once; none for none
	}{
		{"a withdrawn placeholder reports the holder's IP past the bound", func(c *checker, wait func(time.Duration)) {
			withdrawnBesideHolder(c, ip)
			quietFor(t, c, wait, settleBound)
		}, []string{invWithdrawnTooLong}},
		{"a withdrawn placeholder beside the holder while MetalLB has not caught up", func(c *checker, wait func(time.Duration)) {
			outage(c, wait, partyAllocator, 5*time.Minute, func() {
				withdrawnBesideHolder(c, ip)
			})
			wait(settleBound / 2)
			c.onService(reporting(placeholderNamespace, "alloc", nil, withUID("p1"), markedWithdrawn()), false)
			wait(settleBound)
		}, nil},
		{"a withdrawn placeholder beside the holder, MetalLB's first look at it long after it caught up", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			withdrawnBesideHolder(c, ip)
			wait(2 * settleBound)
			look(placeholderNamespace + "/alloc")
			wait(settleBound / 2)
			c.onService(reporting(placeholderNamespace, "alloc", nil, withUID("p1"), markedWithdrawn()), false)
			wait(settleBound)
		}, nil},
		{"a withdrawn placeholder reports the holder's IP past the bound after MetalLB looked at it", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			withdrawnBesideHolder(c, ip)
			wait(2 * settleBound)
			look(placeholderNamespace + "/alloc")
			quietFor(t, c, wait, settleBound)
		}, []string{invWithdrawnTooLong}},
		{"a hold and its carrier share a key that is not the claim's", func(c *checker, wait func(time.Duration)) {
			c.onAddress(address("ip-100-80-0-1", ip, classDelete, "a1", "u1", v1alpha1.ReclaimDelete, v1alpha1.AddressBound), false)
			c.onService(holdOf("ip-100-80-0-1", "h1", []string{ip}, keyed("k1", false)), false)
			c.onService(reporting("t", "a", []string{ip}, keyed("k1", true)), false)
			wait(watchLag)
		}, []string{invWrongKey}},
		{"a hold and its carrier share the claim's key; a hold alone the address's", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			c.onAddress(address("ip-100-80-0-1", ip, classDelete, "a1", "u1", v1alpha1.ReclaimDelete, v1alpha1.AddressBound), false)
			c.onService(holdOf("ip-100-80-0-1", "h1", []string{ip}, keyed(testSecret.claimKey("u1"), false)), false)
			c.onService(reporting("t", "a", []string{ip}, keyed(testSecret.claimKey("u1"), true)), false)
			wait(watchLag)
			c.onService(reporting("t", "a", nil), true)
			c.onService(holdOf("ip-100-80-0-1", "h1", []string{ip}, keyed(testSecret.addressKey("a1"), false)), false)
			wait(watchLag)
		}, nil},
		{"an address stays Bound after its Retain claim is gone", func(c *checker, wait func(time.Duration)) {
			cl, _ := staticPair(c, v1alpha1.ReclaimRetain)
			wait(settleBound)
			c.onClaim(cl, true)
			quietFor(t, c, wait, settleBound)
		}, []string{invPhase}},
		{"an address's phase follows its claim, the core down meanwhile", func(c *checker, wait func(time.Duration)) {
			cl, a := staticPair(c, v1alpha1.ReclaimRetain)
			outage(c, wait, partyCore, 3*settleBound, func() { c.onClaim(cl, true) })
			wait(settleBound / 2)
			a.Status.Phase = v1alpha1.AddressReleased
			c.onAddress(a, false)
			wait(settleBound)
		}, nil},
		{"a Bound claim lists an address bound to another claim", func(c *checker, wait func(time.Duration)) {
			c.onClaim(bound("t", "c", "u1", "100.80.16.1"), false)
			c.onAddress(address("ip-100-80-16-1", "100.80.16.1", classStatic, "a1", "u2", v1alpha1.ReclaimRetain, v1alpha1.AddressBound), false)
			wait(settleBound)
		}, []string{invClaimAddress}},
		{"a Delete address outlives its claim", func(c *checker, wait func(time.Duration)) {
			cl, _ := staticPair(c, v1alpha1.ReclaimDelete)
			c.onClaim(cl, true)
			wait(settleBound)
		}, []string{invOutlived}},
		{"a Delete address goes with its claim once the driver is back", func(c *checker, wait func(time.Duration)) {
			cl, a := staticPair(c, v1alpha1.ReclaimDelete)
			outage(c, wait, partyDriver, 2*settleBound, func() { c.onClaim(cl, true) })
			wait(settleBound - time.Second)
			c.onAddress(a, true)
			wait(settleBound)
		}, nil},
		{"an address of the driver's classes neither held nor carried", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classRetain, v1alpha1.IPv4), false)
			c.onAddress(address("ip-100-80-0-1", ip, classRetain, "a1", "u1", v1alpha1.ReclaimRetain, v1alpha1.AddressBound), false)
			wait(settleBound)
		}, []string{invMissingHold}},
		{"an address held, then carried by a live Service", func(c *checker, wait func(time.Duration)) {
			c.onClaim(bound("t", "c", "u1", ip), false)
			a := address("ip-100-80-0-1", ip, classRetain, "a1", "u1", v1alpha1.ReclaimRetain, v1alpha1.AddressBound)
			c.onAddress(a, false)
			c.onService(holdOf("ip-100-80-0-1", "h1", []string{ip}), false)
			wait(settleBound)
			a.Status.AssociatedTo = &v1alpha1.WorkloadReference{Kind: "Service", Namespace: "t", Name: "a", UID: "s1"}
			c.onAddress(a, false)
			c.onService(holdOf("ip-100-80-0-1", "h1", nil), true)
			c.onService(reporting("t", "a", []string{ip}, withUID("s1"), b.ForClaim("c")), false)
			wait(settleBound)
		}, nil},
		{"an allocation placeholder outlives its claim", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			c.onService(reporting(placeholderNamespace, "alloc-u1-v4", nil, withUID("p1"),
				b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderAllocation), b.WithLabel(v1alpha1.LabelClaimUID, "u1")), false)
			wait(settleBound)
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), true)
			wait(settleBound)
		}, []string{invLeftover}},
		{"a hold outlives its address", func(c *checker, wait func(time.Duration)) {
			a := address("ip-100-80-0-1", ip, classRetain, "a1", "", v1alpha1.ReclaimRetain, v1alpha1.AddressAvailable)
			c.onAddress(a, false)
			c.onService(holdOf("ip-100-80-0-1", "h1", []string{ip}), false)
			wait(settleBound)
			c.onAddress(a, true)
			wait(settleBound)
		}, []string{invLeftover}},
		{"a workload Service keeps an address its claim is not Bound to, with no hold of it", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			c.onService(reporting("t", "a", []string{ip}, withUID("s1"), b.ForClaim("c")), false)
			quietFor(t, c, wait, settleBound)
		}, []string{invStray}},
		{"a workload Service keeps an address past the bound while its hold, looked at, does not hold it", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			strayBesideHold(c, ip, nil)
			wait(2 * settleBound)
			look(placeholderNamespace + "/hold-" + addressName(ip))
			quietFor(t, c, wait, settleBound)
		}, []string{invStray, invUnheld}},
		{"a claim's deletion: the hold comes back sharing the address, then the pin goes", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			strayBesideHold(c, ip, nil)
			wait(2 * settleBound)
			look(placeholderNamespace + "/hold-" + addressName(ip))
			wait(settleBound - time.Second)
			strayBesideHold(c, ip, []string{ip})
			wait(settleBound - time.Second)
			c.onService(reporting("t", "a", nil, withUID("s1"), markedWithdrawn()), false)
			wait(settleBound)
		}, nil},
		{"a withdrawn Service keeps an address no other Service holds", func(c *checker, wait func(time.Duration)) {
			c.onService(reporting("t", "a", []string{ip}, withUID("s1"), markedWithdrawn()), false)
			quietFor(t, c, wait, settleBound)
		}, []string{invKept}},
		{"a withdrawn Service keeps an address until MetalLB first looks at it, then lets go", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			c.onService(reporting("t", "a", []string{ip}, withUID("s1"), markedWithdrawn()), false)
			wait(3 * settleBound)
			look("t/a")
			wait(settleBound - time.Second)
			c.onService(reporting("t", "a", nil, withUID("s1"), markedWithdrawn()), false)
			wait(settleBound)
		}, nil},
		{"an allocation placeholder's address is never recorded", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			c.onService(allocationOf("u1", ip), false)
			quietFor(t, c, wait, settleBound)
		}, []string{invUnrecorded}},
		{"an allocation placeholder's address recorded once the driver is back", func(c *checker, wait func(time.Duration)) {
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			outage(c, wait, partyDriver, 3*settleBound, func() { c.onService(allocationOf("u1", ip), false) })
			wait(settleBound - time.Second)
			c.onAddress(address(addressName(ip), ip, classDelete, "a1", "u1", v1alpha1.ReclaimDelete, v1alpha1.AddressBound), false)
			wait(settleBound)
		}, nil},
		{"a hold MetalLB looked at does not report its address", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			c.onAddress(address(addressName(ip), ip, classRetain, "a1", "", v1alpha1.ReclaimRetain, v1alpha1.AddressAvailable), false)
			c.onService(holdOf(addressName(ip), "h1", nil), false)
			wait(2 * settleBound)
			look(placeholderNamespace + "/hold-" + addressName(ip))
			quietFor(t, c, wait, settleBound)
		}, []string{invUnheld}},
		{"a hold waits for a former carrier to let go, then for MetalLB's next look", func(c *checker, wait func(time.Duration)) {
			look := looks(c)
			hold := placeholderNamespace + "/hold-" + addressName(ip)
			c.onAddress(address(addressName(ip), ip, classRetain, "a1", "", v1alpha1.ReclaimRetain, v1alpha1.AddressAvailable), false)
			c.onService(holdOf(addressName(ip), "h1", nil), false)
			c.onService(reporting("t", "a", []string{ip}, withUID("s1"), markedWithdrawn()), false)
			look(hold)
			look("t/a")
			wait(settleBound - time.Second)
			c.onService(reporting("t", "a", nil, withUID("s1"), markedWithdrawn()), false)
			wait(2 * settleBound)
			look(hold)
			wait(settleBound - time.Second)
			c.onService(holdOf(addressName(ip), "h1", []string{ip}), false)
			wait(settleBound)
		}, nil},
		{"a ledger whose total is not its entries' sum", func(c *checker, wait func(time.Duration)) {
			c.limits[classDelete] = 10
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.Dual), false)
			c.onLedger(ledger(classDelete, 1, map[types.UID]int32{"u1": 2}), false)
			wait(0)
		}, []string{invLedger}},
		{"a ledger counting a deleted claim", func(c *checker, wait func(time.Duration)) {
			admitOne(c, 10)
			wait(watchLag)
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), true)
			quietFor(t, c, wait, watchLag)
		}, []string{invLedger}},
		{"an admitted claim the ledger does not count", func(c *checker, wait func(time.Duration)) {
			c.limits[classDelete] = 10
			c.onLedger(ledger(classDelete, 0, nil), false)
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			wait(watchLag)
		}, []string{invLedger}},
		{"a ledger that follows its claims", func(c *checker, wait func(time.Duration)) {
			admitOne(c, 3)
			c.onClaim(claimOf("d", "u2", classDelete, v1alpha1.Dual), false)
			c.onLedger(ledger(classDelete, 3, map[types.UID]int32{"u1": 1, "u2": 2}), false)
			wait(watchLag)
			releaseOne(c, ledger(classDelete, 2, map[types.UID]int32{"u2": 2}))
			wait(watchLag)
		}, nil},
		{"a claim waits for room while its namespace has some", func(c *checker, wait func(time.Duration)) {
			admitOne(c, 2)
			c.onClaim(waitingForRoom("d", "u2", v1alpha1.IPv4), false)
			wait(settleBound)
		}, []string{invRefusedWithRoom}},
		{"a claim waits for room while there is none, then gets it", func(c *checker, wait func(time.Duration)) {
			admitOne(c, 2)
			c.onClaim(waitingForRoom("d", "u2", v1alpha1.Dual), false)
			wait(settleBound)
			if p := c.progress(); p.Waiting != 1 {
				t.Errorf("a Dual claim with room for one address: %s, want it waiting", p)
			}
			releaseOne(c, ledger(classDelete, 0, nil))
			wait(settleBound / 2)
			c.onClaim(claimOf("d", "u2", classDelete, v1alpha1.Dual), false)
			c.onLedger(ledger(classDelete, 2, map[types.UID]int32{"u2": 2}), false)
			wait(settleBound)
		}, nil},
		{"a ledger over its class's limit", func(c *checker, wait func(time.Duration)) {
			c.limits[classDelete] = 2
			c.onLedger(ledger(classDelete, 3, map[types.UID]int32{"u1": 1, "u2": 2}), false)
			c.onClaim(claimOf("c", "u1", classDelete, v1alpha1.IPv4), false)
			c.onClaim(claimOf("d", "u2", classDelete, v1alpha1.Dual), false)
			wait(0)
		}, []string{invOverLimit}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, wait := clocked()
			tc.feed(c, wait)
			got, _ := c.result()
			invariants := make([]string, 0, len(got))
			for _, v := range got {
				invariants = append(invariants, v.Invariant)
			}
			slices.Sort(invariants)
			if invariants = slices.Compact(invariants); !slices.Equal(invariants, slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("violations %+v, want exactly these invariants broken: %q", got, tc.want)
			}
		})
	}
}

// TestOpenConditionsHoldConvergenceBackAndEndTheRun: a bounded invariant
// still broken keeps the run from converging, and is reported at the end
// even when its parties never could act.
func TestOpenConditionsHoldConvergenceBackAndEndTheRun(t *testing.T) {
	c, wait := clocked()
	c.abilities.set(partyDriver, false, c.now())
	c.onAddress(address("ip-100-80-0-1", "100.80.0.1", classRetain, "a1", "", v1alpha1.ReclaimRetain, v1alpha1.AddressAvailable), false)
	wait(time.Second)
	if p := c.progress(); p.converged() || p.Unsettled != 1 {
		t.Fatalf("an address without a hold: %s, want 1 unsettled", p)
	}
	wait(watchLag)
	if v, _ := c.result(); len(v) > 0 {
		t.Fatalf("violations while the driver cannot act: %+v", v)
	}
	c.finalCheck()
	if v, _ := c.result(); len(v) != 1 || v[0].Invariant != invMissingHold || !strings.Contains(v[0].Detail, "end of the run") {
		t.Errorf("violations %+v, want the missing hold, at the end of the run", v)
	}
}

// TestSecretMatchesTheDriversMarks pins the harness's copy of the driver's
// marks to values the driver computes (placeholder.Secret, keyed with
// "ns-uid"): a change on either side fails here before a chaos run.
func TestSecretMatchesTheDriversMarks(t *testing.T) {
	s := secret("ns-uid")
	for _, tc := range []struct{ got, want string }{
		{s.withdrawn("svc-uid"), "c5fb7d38b5f9fc1b6c2d6a89"},
		{s.claimKey("claim-uid"), "iad-ee863dcd02ecb597ff2fafc7"},
		{s.addressKey("address-uid"), "iad-a06bf0c4b7da5a99b341eac5"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// quietFor checks that c reports nothing until just before bound has passed,
// then lets the clock run past it, so that the case can see the violation
// the bound allowed.
func quietFor(t *testing.T, c *checker, wait func(time.Duration), bound time.Duration) {
	t.Helper()
	wait(bound - time.Second)
	if v, _ := c.result(); len(v) > 0 {
		t.Errorf("violations within %s: %+v", bound, v)
	}
	wait(2 * time.Second)
}

// wantViolation fails t unless got is empty (want "") or holds exactly one
// violation, of invariant want.
func wantViolation(t *testing.T, got []Violation, want string) {
	t.Helper()
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("violations %+v, want none", got)
	case want != "" && (len(got) != 1 || got[0].Invariant != want):
		t.Errorf("violations %+v, want exactly one of %q", got, want)
	}
}

// TestProgressCountsTheStaticClassesClaimsApart: a static class's claim
// that is not Bound, or is being deleted, counts as unsettled on the static
// path; a driven class's does not, and a Bound static claim settles it.
func TestProgressCountsTheStaticClassesClaimsApart(t *testing.T) {
	c, _ := clocked()
	c.heldClasses[classStatic] = false
	static := claimOf("s", "u1", classStatic, v1alpha1.IPv4)
	c.onClaim(static, false)
	c.onClaim(claimOf("d", "u2", classDelete, v1alpha1.IPv4), false)
	if p := c.progress(); p.StaticUnsettled != 1 || p.NotBound != 2 {
		t.Errorf("a Pending static claim and a Pending driven one: %d static unsettled, %d not Bound; want 1, 2", p.StaticUnsettled, p.NotBound)
	}
	static.Status.Phase = v1alpha1.ClaimBound
	c.onClaim(static, false)
	if p := c.progress(); p.StaticUnsettled != 0 || p.NotBound != 1 {
		t.Errorf("the static claim Bound: %d static unsettled, %d not Bound; want 0, 1", p.StaticUnsettled, p.NotBound)
	}
	static.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	c.onClaim(static, false)
	if p := c.progress(); p.StaticUnsettled != 1 {
		t.Errorf("the static claim being deleted: %d static unsettled, want 1", p.StaticUnsettled)
	}
}

// A rebuild whose old Service outlives its wait is named apart, not failed:
// the convergence check judges the Service still being deleted. Any other
// error of an operation stays a workload error.
func TestLateRebuildIsLeftToTheConvergenceCheck(t *testing.T) {
	w := &workload{e: &env{}, counts: map[string]int{}, ops: []op{
		{"rebuild", func(context.Context) error { return lateDeletion{key: "chaos/svc-0001"} }},
		{"rebuild", func(context.Context) error { return errors.New("refused") }},
		{"rebuild", func(context.Context) error { return nil }},
	}}
	w.run(context.Background(), 0)
	if late := w.lateRebuilds(); len(late) != 1 || !strings.Contains(late[0], "chaos/svc-0001") {
		t.Errorf("late rebuilds %q, want the one of chaos/svc-0001", late)
	}
	if errs := w.errors(); len(errs) != 1 || errs[0] != "rebuild: refused" {
		t.Errorf("workload errors %q, want the refused rebuild alone", errs)
	}
	if n := w.summary()["rebuild"]; n != 1 {
		t.Errorf("%d rebuilds counted done, want 1", n)
	}
}
