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

package importtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/importer"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/ipaddr"
	b "github.com/cozystack/address-controller/test/builder"
)

// TestImportKeepsEveryAddress is issue 16's story: an auto-assigned pool of
// the admin's own has handed addresses to 30 plain Services; a class is
// created over its range; the import's dry run lists who goes under which
// claim and who is skipped and why; the import, cut short half way and run
// again, imports exactly the importable ones; the handover moves the range
// into the class's pool; and through all of it no imported Service changes
// or loses its address, in its status or in MetalLB's events. Afterwards an
// imported Service's address is held when the Service goes, and a new
// Service naming the claim gets it.
func TestImportKeepsEveryAddress(t *testing.T) {
	g := begin(t)
	ctx := context.Background()
	nsA, nsB := kit.Namespace(t), kit.Namespace(t)
	// v4 and v6 are the class's, far lies outside every class; each run
	// of the test has its own.
	v4, far, v6 := freshPrefixes()
	classRanges := []string{v4 + "0/27", v6 + "/120"}
	legacy := legacyPool(t, g, []string{classRanges[0], classRanges[1], far + "0/30"}, nsA, nsB, placeholderNS)

	// The 30 plain Services: two sharing a key, 17 IPv4, 5 IPv6, 5
	// dual-stack, one outside every class.
	shareKey := func(s *corev1.Service) {
		s.Annotations = map[string]string{"metallb.io/allow-shared-ip": "legacy-key"}
	}
	kit.Create(g, b.Service(nsA, "shared-a", shareKey, b.Port(80)))
	g.Eventually(lbIngress(nsA, "shared-a"), timeout, tick).ShouldNot(BeEmpty())
	sharedIP := lbIngress(nsA, "shared-a")()
	kit.Create(g, b.Service(nsB, "shared-b", shareKey, b.Port(443), b.PinnedByHand(sharedIP)))
	kit.Create(g, b.Service(nsB, "outside", b.PinnedByHand(far+"1")))
	// Beyond the 30: a Service pinned to an address the ledger will record
	// for another claim, a ClusterIP Service pinned into the class, and a
	// placeholder.
	kit.Create(g, b.Service(nsB, "pinned-ledger", b.PinnedByHand(v4+"30")))
	kit.Create(g, b.Service(nsA, "clusterip", b.ClusterIPOnly(), b.PinnedByHand(v4+"29")))
	stray := "hold-stray-" + suffix(nsA)
	kit.Make(t, g, b.Service(placeholderNS, stray, b.WithLabel(v1alpha1.LabelPlaceholder, v1alpha1.PlaceholderHold),
		b.PinnedByHand(v4+"28")))
	importable := make([]string, 0, 27)
	for i := range 17 {
		ns := []string{nsA, nsB}[i%2]
		kit.Create(g, b.Service(ns, fmt.Sprintf("v4-%02d", i)))
		importable = append(importable, fmt.Sprintf("%s/v4-%02d", ns, i))
	}
	for i := range 5 {
		kit.Create(g, b.Service(nsA, fmt.Sprintf("v6-%d", i), b.IPv6Only()))
		kit.Create(g, b.Service(nsB, fmt.Sprintf("dual-%d", i), b.DualStack()))
		importable = append(importable, fmt.Sprintf("%s/v6-%d", nsA, i), fmt.Sprintf("%s/dual-%d", nsB, i))
	}
	// A claim already named like one of the Services.
	kit.Create(g, b.Claim(nsA, "v4-00", b.OfClass("elsewhere")))

	start := map[string]string{}
	for _, key := range append(slices.Clone(importable), nsA+"/shared-a", nsB+"/shared-b", nsB+"/outside", nsB+"/pinned-ledger", placeholderNS+"/"+stray) {
		ns, name, _ := strings.Cut(key, "/")
		g.Eventually(lbIngress(ns, name), timeout, tick).ShouldNot(BeEmpty(), key)
		start[key] = lbIngress(ns, name)()
	}
	g.Expect(start[nsB+"/shared-b"]).To(Equal(sharedIP))
	g.Expect(start[nsB+"/outside"]).To(Equal(far + "1"))
	for _, key := range importable {
		want := HavePrefix(v4)
		switch {
		case strings.Contains(key, "/v6-"):
			want = HavePrefix(v6)
		case strings.Contains(key, "/dual-"):
			want = MatchRegexp(`^` + regexp.QuoteMeta(v4) + `\d+,` + regexp.QuoteMeta(v6))
		}
		g.Expect(start[key]).To(want, key)
	}

	class := "public-" + suffix(nsA)
	blockedClass(t, g, class, classRanges)
	// The ledger already records v4.30 for another claim.
	recorded := ipaddr.ObjectName(mustAddr(v4 + "30"))
	kit.Create(g, b.Claim(nsB, "other", b.OfClass(class), b.Named(recorded)))
	kit.Make(t, g, b.Address(recorded, v4+"30", class, b.PreBound(nsB, "other")))
	g.Eventually(kit.StateOfClaim(g, nsB, "other"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))

	allocated := serviceEvents(g, "IPAllocated")
	for _, key := range importable {
		g.Expect(allocated).To(HaveKey(key), "MetalLB's event of the first allocation of %s", key)
	}
	importStart := settle(g, nsA)
	watcher := watchIngress(t, g, pick(start, importable))
	opts := importer.Options{Driver: "metallb-iad", Scope: importer.Scope{Class: class, Namespaces: []string{nsA, nsB, placeholderNS},
		PlaceholderNamespace: placeholderNS}, Mode: importer.ModeImport, Timeout: timeout}

	// The dry run.
	var out bytes.Buffer
	g.Expect(importer.Run(ctx, k8s, backend, opts, &out)).To(Succeed())
	table := out.String()
	t.Log("\n" + table)
	for _, key := range importable {
		g.Expect(lineOf(table, key)).To(ContainSubstring(" import"), key)
	}
	g.Expect(lineOf(table, nsA+"/v4-00")).To(ContainSubstring(nsA + "/v4-00-imported (IPv4)"))
	g.Expect(lineOf(table, nsB+"/dual-0")).To(ContainSubstring(nsB + "/dual-0 (Dual)"))
	g.Expect(lineOf(table, nsA+"/v6-0")).To(ContainSubstring(nsA + "/v6-0 (IPv6)"))
	for key, reason := range map[string]string{
		nsA + "/shared-a":           "skip: shares " + sharedIP + " with Service " + nsB + "/shared-b",
		nsB + "/shared-b":           "skip: shares " + sharedIP + " with Service " + nsA + "/shared-a",
		nsB + "/outside":            "skip: address " + far + "1 is outside class " + class,
		nsB + "/pinned-ledger":      "skip: " + v4 + "30 is in the ledger already: IPAddress " + recorded + ", bound to IPAddressClaim " + nsB + "/other",
		nsA + "/clusterip":          "skip: type ClusterIP, not LoadBalancer",
		placeholderNS + "/" + stray: "skip: a placeholder of metallb-iad",
	} {
		g.Expect(lineOf(table, key)).To(ContainSubstring(reason), key)
	}
	g.Expect(table).To(ContainSubstring(fmt.Sprintf("class %s: 27 to import, 0 imported already, 6 skipped", class)))
	g.Expect(importedClaims(g, nsA, nsB)).To(BeEmpty(), "a dry run creates nothing")

	// The import, cut short at its eleventh IPAddress, as by a crash:
	// nothing it writes after that arrives...
	var addressesMade atomic.Int32
	var crashed atomic.Bool
	crash := errors.New("injected crash")
	cut := func() error {
		if crashed.Load() {
			return crash
		}
		return nil
	}
	crashing := interceptor.NewClient(k8s, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*v1alpha1.IPAddress); ok && addressesMade.Add(1) > 10 {
				crashed.Store(true)
			}
			if err := cut(); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := cut(); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	opts.Apply = true
	out.Reset()
	g.Expect(importer.Run(ctx, crashing, backend, opts, &out)).To(MatchError(importer.ErrIncomplete))
	t.Log("\n" + out.String())
	g.Expect(out.String()).To(ContainSubstring("injected crash"))
	// ...and run again: it resumes and finishes, without duplicates.
	out.Reset()
	began := time.Now()
	err := importer.Run(ctx, k8s, backend, opts, &out)
	t.Logf("resumed in %v:\n%s", time.Since(began), out.String())
	if err != nil {
		for _, key := range importable {
			ns, name, _ := strings.Cut(key, "/")
			svc := kit.Service(g, ns, name)
			claim := &v1alpha1.IPAddressClaim{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: svc.Annotations[v1alpha1.AnnotationIPAddressClaim]}, claim)
			t.Logf("%s: claim %s %+v %+v", key, claim.Name, claim.Spec, claim.Status)
			for ip := range strings.SplitSeq(start[key], ",") {
				a := &v1alpha1.IPAddress{}
				_ = k8s.Get(ctx, client.ObjectKey{Name: ipaddr.ObjectName(mustAddr(ip))}, a)
				t.Logf("   address %s %+v %+v", a.Name, a.Spec.ClaimRef, a.Status)
			}
		}
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.String()).To(ContainSubstring(" resume"))

	claims := importedClaims(g, nsA, nsB)
	g.Expect(claims).To(HaveLen(27))
	for _, key := range importable {
		ns, name, _ := strings.Cut(key, "/")
		svc := kit.Service(g, ns, name)
		claimName := svc.Annotations[v1alpha1.AnnotationIPAddressClaim]
		g.Expect(claims).To(HaveKeyWithValue(ns+"/"+claimName, string(svc.UID)), key)
		g.Expect(svc.Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", start[key]), key)
		claim := kit.Claim(g, ns, claimName)
		g.Expect(claim.Status.Phase).To(Equal(v1alpha1.ClaimBound), key)
		var bound []string
		for _, a := range claim.Status.Addresses {
			bound = append(bound, a.Address)
		}
		g.Expect(strings.Join(bound, ",")).To(Equal(start[key]), key)
		for _, ip := range bound {
			name := ipaddr.ObjectName(mustAddr(ip))
			g.Eventually(func() *v1alpha1.WorkloadReference { return kit.Address(g, name).Status.AssociatedTo }, timeout, tick).
				Should(HaveField("Name", svc.Name), key)
			g.Expect(kit.Address(g, name).Labels).To(HaveKeyWithValue(v1alpha1.LabelImportedFor, string(svc.UID)))
		}
	}
	g.Expect(kit.Service(g, nsA, "v4-00").Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationIPAddressClaim, "v4-00-imported"))
	for _, key := range []string{nsA + "/shared-a", nsB + "/shared-b", nsB + "/outside", nsB + "/pinned-ledger"} {
		ns, name, _ := strings.Cut(key, "/")
		g.Expect(kit.Service(g, ns, name).Annotations).NotTo(HaveKey(v1alpha1.AnnotationIPAddressClaim), key)
	}
	// A rerun has nothing left to do.
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, importer.Options{Driver: "metallb-iad", Scope: opts.Scope, Mode: importer.ModeImport}, &out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring(fmt.Sprintf("class %s: 0 to import, 27 imported already, 6 skipped", class)))

	// The handover: the class's pool first, then the legacy pool shrinks.
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, importer.Options{Driver: "metallb-iad", Scope: opts.Scope, Mode: importer.ModeHandover, Apply: true, Timeout: timeout}, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(poolAddresses(g, legacy)()).To(Equal([]string{far + "0/30"}))
	g.Expect(poolAddresses(g, params.PoolName(class))()).To(Equal(classRanges))
	g.Eventually(renderedReason(g, class), timeout, tick).Should(Equal("Rendered"))
	// MetalLB has moved every imported Service to the class's pool.
	for _, key := range importable {
		ns, name, _ := strings.Cut(key, "/")
		g.Eventually(func() map[string]string { return kit.Service(g, ns, name).Annotations }, timeout, tick).
			Should(HaveKeyWithValue("metallb.io/ip-allocated-from-pool", params.PoolName(class)), key)
	}
	g.Expect(kit.Service(g, nsB, "outside").Annotations).To(HaveKeyWithValue("metallb.io/ip-allocated-from-pool", legacy))

	// Through all of it, no imported Service lost or changed its address.
	g.Consistently(watcher.Violations, 2*time.Second, tick).Should(BeEmpty())
	cleared := serviceEvents(g, "ClearAssignment")
	allocated = serviceEvents(g, "IPAllocated")
	for _, key := range importable {
		g.Expect(cleared).NotTo(HaveKey(key))
		g.Expect(allocated[key]).To(BeTemporally("<", importStart), "%s: %s", key, strings.Join(eventsOf(g, key), "\n"))
		ns, name, _ := strings.Cut(key, "/")
		g.Expect(lbIngress(ns, name)()).To(Equal(start[key]), key)
	}
	watcher.stop()

	// An imported Service goes: the hold comes back; a new Service naming
	// the claim gets the same address.
	gone := kit.Service(g, nsB, "v4-01")
	ip := start[nsB+"/v4-01"]
	g.Expect(k8s.Delete(ctx, gone)).To(Succeed())
	g.Eventually(holders(g, ip), timeout, tick).Should(ConsistOf(HavePrefix(placeholderNS + "/hold-")))
	kit.Create(g, b.Service(nsB, "v4-01-again", b.ForClaim(gone.Annotations[v1alpha1.AnnotationIPAddressClaim])))
	g.Eventually(lbIngress(nsB, "v4-01-again"), timeout, tick).Should(Equal(ip))
	g.Eventually(holders(g, ip), timeout, tick).Should(ConsistOf(nsB + "/v4-01-again"))
}

// TestImportUndoRestores: undo on a fresh import restores the starting
// state, and keeps an import something has used since.
func TestImportUndoRestores(t *testing.T) {
	g := begin(t)
	ctx := context.Background()
	ns := kit.Namespace(t)
	v4, _, v6 := freshPrefixes()
	classRanges := []string{v4 + "0/28", v6 + "/124"}
	legacyPool(t, g, classRanges, ns)
	kit.Create(g, b.Service(ns, "web"), b.Service(ns, "api", b.PinnedByHand(v4+"9")), b.Service(ns, "v6", b.IPv6Only()),
		b.Service(ns, "dual", b.DualStack()), b.Service(ns, "used"))
	names := []string{"web", "api", "v6", "dual", "used"}
	before := map[string]*corev1.Service{}
	for _, name := range names {
		g.Eventually(lbIngress(ns, name), timeout, tick).ShouldNot(BeEmpty(), name)
		before[name] = kit.Service(g, ns, name)
	}
	class := "undo-" + suffix(ns)
	blockedClass(t, g, class, classRanges)
	importStart := settle(g, ns)
	want := map[string]string{}
	for _, name := range names[:4] {
		want[ns+"/"+name] = ingress(before[name])
	}
	watcher := watchIngress(t, g, want)

	// The command itself, with the admin's kubeconfig: the dry run.
	var stdout, stderr bytes.Buffer
	var flags metallb.Options
	g.Expect(importer.Main(ctx, "metallb-iad", flags.BindImportFlags, func() importer.Backend { return metallb.ForImport(flags) }, []string{"--kubeconfig", mt.Cluster.Kubeconfig, "--class", class, "--namespace", ns,
		"--placeholder-namespace", placeholderNS}, &stdout, &stderr)).To(Equal(0), stderr.String())
	g.Expect(stdout.String()).To(ContainSubstring(fmt.Sprintf("class %s: 5 to import, 0 imported already, 0 skipped", class)))
	g.Expect(importedClaims(g, ns)).To(BeEmpty())

	opts := importer.Options{Driver: "metallb-iad", Scope: importer.Scope{Class: class, Namespaces: []string{ns}, PlaceholderNamespace: placeholderNS}, Mode: importer.ModeImport, Apply: true, Timeout: timeout}
	var out bytes.Buffer
	g.Expect(importer.Run(ctx, k8s, backend, opts, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(importedClaims(g, ns)).To(HaveLen(5))
	// Something uses one import: its Service goes, and the claim holds the
	// address now.
	g.Expect(k8s.Delete(ctx, kit.Service(g, ns, "used"))).To(Succeed())
	g.Eventually(kit.Gone(before["used"]), timeout, tick).Should(BeTrue())

	opts.Mode = importer.ModeUndo
	opts.Apply = false
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, opts, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(lineOf(out.String(), ns+"/used")).To(ContainSubstring("keep: Service used is gone"))
	g.Expect(lineOf(out.String(), ns+"/web")).To(ContainSubstring("remove"))
	g.Expect(importedClaims(g, ns)).To(HaveLen(5), "a dry run removes nothing")

	opts.Apply = true
	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, opts, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(importedClaims(g, ns)).To(And(HaveLen(1), HaveKey(ns+"/used")))
	addresses := &v1alpha1.IPAddressList{}
	g.Expect(k8s.List(ctx, addresses, client.HasLabels{v1alpha1.LabelImportedFor})).To(Succeed())
	for _, a := range addresses.Items {
		if a.Spec.ClassName == class {
			g.Expect(a.Labels[v1alpha1.LabelImportedFor]).To(Equal(string(before["used"].UID)), a.Name)
		}
	}
	for _, name := range names[:4] {
		svc := kit.Service(g, ns, name)
		g.Expect(svc.Annotations).To(Equal(before[name].Annotations), name)
		g.Expect(svc.Labels).To(Equal(before[name].Labels), name)
		g.Expect(svc.Finalizers).To(Equal(before[name].Finalizers), name)
		g.Expect(svc.Status).To(Equal(before[name].Status), name)
	}
	g.Consistently(watcher.Violations, 2*time.Second, tick).Should(BeEmpty())
	g.Expect(serviceEvents(g, "ClearAssignment")).NotTo(HaveKey(HavePrefix(ns + "/")))
	allocated := serviceEvents(g, "IPAllocated")
	for key := range want {
		g.Expect(allocated).To(HaveKey(key))
		g.Expect(allocated[key]).To(BeTemporally("<", importStart), key)
	}
}

// importedClaims maps "namespace/name" of every claim an import created in
// the namespaces to the UID of its Service.
func importedClaims(g Gomega, namespaces ...string) map[string]string {
	out := map[string]string{}
	for _, ns := range namespaces {
		list := &v1alpha1.IPAddressClaimList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns), client.HasLabels{v1alpha1.LabelImportedFor})).To(Succeed())
		for _, c := range list.Items {
			out[c.Namespace+"/"+c.Name] = c.Labels[v1alpha1.LabelImportedFor]
		}
	}
	return out
}

// lineOf is the line of a table that starts with key and a space.
func lineOf(table, key string) string {
	for line := range strings.SplitSeq(table, "\n") {
		if strings.HasPrefix(line, key+" ") {
			return line
		}
	}
	return ""
}

var nextPrefix atomic.Int32

// freshPrefixes returns the first three octets (with the dot) of two IPv4
// /24s (in 198.18.0.0/15, set aside for tests) and an IPv6 prefix (in
// fd00::/8, without the length) that no other test or run uses: MetalLB
// refuses overlapping pools.
func freshPrefixes() (v4, far, v6 string) {
	n := nextPrefix.Add(1)
	return fmt.Sprintf("198.18.%d.", 2*n), fmt.Sprintf("198.18.%d.", 2*n+1), fmt.Sprintf("fd%x::", 0x60+n)
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func pick(m map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
