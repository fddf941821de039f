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
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Violation is one broken invariant, first seen at At.
type Violation struct {
	Invariant string    `json:"invariant"`
	Detail    string    `json:"detail"`
	At        time.Time `json:"at"`
}

// Invariants checked on every watch event.
const (
	invTwoServices   = "an IP reported by two Services that do not share it by design"
	invTwoCarriers   = "an IP reported by two workloads at once (two carriers of one claim)"
	invBadMark       = "a Service labelled withdrawn with a value that is not its mark"
	invClaimChanged  = "a Bound claim's addresses changed"
	invClaimLeft     = "a Bound claim left Bound"
	invTwoClaims     = "an address bound to two claims"
	invRebound       = "an IPAddress re-bound to another claim"
	invUnrecordedEnd = "a placeholder holds an IP the ledger does not record (at the end)"
	// Cilium: the driver writes a Service's pool label in the same patch as
	// its pin and takes it away in the same patch as the pin (LB-IPAM
	// keeps an address while a pool selects the Service, pin or none).
	invPoolUnpinned = "a workload Service carries a Cilium pool label without the driver's pin"
)

type serviceState struct {
	key         string
	uid         types.UID
	placeholder bool   // in the placeholder namespace
	role        string // its placeholder label: allocation or hold
	// addressLabel is the IPAddress a placeholder holds, or will once it
	// is recorded (the driver's label); addressName the same from its
	// annotation, set on holds.
	addressLabel, addressName string
	claimUID                  types.UID // an allocation placeholder's claim
	// withdrawn: the Service carries the withdrawn label; letGo: with the
	// mark the driver computes for it, which exempts it from the rule of
	// one holder per IP for a bounded time.
	withdrawn, letGo     bool
	deleting             bool
	claim                string // the claim annotation, in the Service's namespace
	sharedKey, driverKey string
	// pinned are the IPs of the driver's pin marker (AnnotationPinnedBy);
	// pool, the Cilium pool label's value, if it carries one.
	pinned  []string
	pool    string
	hasPool bool
	ips     []string
}

type claimState struct {
	uid       types.UID
	ns, name  string
	phase     v1alpha1.IPAddressClaimPhase
	ips       []string
	names     []string // the IPAddresses its status lists
	deleting  bool
	admitted  string // status.admittedClassName
	addresses int32  // one per family it asks for
	class     string // the class it asks for
	// atLimit: its Bound condition says it waits for room under the
	// class's limit (ClassLimitReached).
	atLimit bool
}

type addressState struct {
	name, ip, class string
	uid             types.UID
	reclaim         v1alpha1.ReclaimPolicy
	phase           v1alpha1.IPAddressPhase
	claimUID        types.UID
	claimKey        string // namespace/name of its claimRef
	associated      *v1alpha1.WorkloadReference
	deleting        bool
}

// ledgerState is one IPAddressClassUsage.
type ledgerState struct {
	ns, class string
	entries   map[types.UID]int32
	names     map[types.UID]string
	addresses int32 // spec.addresses
}

// checker keeps what the watches reported and the invariants' verdicts.
type checker struct {
	mu sync.Mutex
	// secret is the placeholder namespace's UID: what the driver keys its
	// marks and sharing keys with.
	secret secret
	// b is the driver under chaos: its placeholder namespace and the
	// names it writes.
	b backend
	// heldClasses are the classes whose addresses the driver holds;
	// limits, the classes' addressesPerNamespace.
	heldClasses map[string]bool
	limits      map[string]int32
	abilities   *abilities
	now         func() time.Time
	// handled tells when the allocator first handled a Service
	// (namespace/name) at or after a time, where its log shows it (MetalLB:
	// see metallblog.State.HandledAfter); nil where it does not.
	handled func(key string, after time.Time) (time.Time, bool)

	services  map[string]*serviceState
	reporters map[string]map[string]bool // IP → Service keys reporting it
	claims    map[string]*claimState     // namespace/name
	claimUIDs map[types.UID]*claimState
	// goneClaims are the UIDs of claims seen deleted.
	goneClaims map[types.UID]bool
	// boundOnce is what each claim was first Bound to, by UID.
	boundOnce map[types.UID][]string
	addresses map[string]*addressState // by object name
	// everBound is the last non-empty claim UID each IPAddress was bound to.
	everBound map[string]types.UID
	ledgers   map[string]*ledgerState // namespace/class
	// open are the bounded invariants broken now, by key (see sweep).
	open       map[string]*openCondition
	violations map[string]Violation
	events     int
}

func newChecker(s secret) *checker {
	return &checker{
		secret: s, b: metallbBackend, heldClasses: map[string]bool{}, limits: map[string]int32{}, abilities: newAbilities(), now: time.Now,
		services: map[string]*serviceState{}, reporters: map[string]map[string]bool{},
		claims: map[string]*claimState{}, claimUIDs: map[types.UID]*claimState{}, goneClaims: map[types.UID]bool{},
		boundOnce: map[types.UID][]string{}, addresses: map[string]*addressState{}, everBound: map[string]types.UID{},
		ledgers: map[string]*ledgerState{}, open: map[string]*openCondition{}, violations: map[string]Violation{},
	}
}

// violate records a violation once per key.
func (c *checker) violate(key, invariant, detail string) {
	if _, seen := c.violations[key]; seen {
		return
	}
	c.violations[key] = Violation{Invariant: invariant, Detail: detail, At: c.now()}
}

func normalize(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	return a.String()
}

// observe counts one watch event and locks c while a handler takes it in;
// the handler defers the unlock it returns.
func (c *checker) observe() (unlock func()) {
	c.mu.Lock()
	c.events++
	return c.mu.Unlock
}

// onService updates the reporters of each IP, checks a withdrawn label's
// value, and checks that no two Services report one IP unless they share it
// by design.
func (c *checker) onService(svc *corev1.Service, gone bool) {
	defer c.observe()()
	key := svc.Namespace + "/" + svc.Name
	if old, ok := c.services[key]; ok {
		for _, ip := range old.ips {
			delete(c.reporters[ip], key)
			if len(c.reporters[ip]) == 0 {
				delete(c.reporters, ip)
			}
		}
		delete(c.services, key)
	}
	if gone {
		return
	}
	s := &serviceState{
		key: key, uid: svc.UID, placeholder: svc.Namespace == c.b.placeholderNamespace,
		role: svc.Labels[v1alpha1.LabelPlaceholder], addressLabel: svc.Labels[v1alpha1.LabelAddress],
		addressName: svc.Annotations[v1alpha1.AnnotationAddressName], claimUID: types.UID(svc.Labels[v1alpha1.LabelClaimUID]),
		claim:     svc.Annotations[v1alpha1.AnnotationIPAddressClaim],
		sharedKey: svc.Annotations[c.b.sharingKey], driverKey: svc.Annotations[v1alpha1.AnnotationSharedBy],
	}
	if marker := svc.Annotations[v1alpha1.AnnotationPinnedBy]; marker != "" {
		for ip := range strings.SplitSeq(marker, ",") {
			s.pinned = append(s.pinned, normalize(strings.TrimSpace(ip)))
		}
	}
	if c.b.poolLabel != "" {
		s.pool, s.hasPool = svc.Labels[c.b.poolLabel]
	}
	if s.hasPool && !s.placeholder && len(s.pinned) == 0 {
		c.violate("pool-unpinned "+string(svc.UID), invPoolUnpinned,
			fmt.Sprintf("%s (uid %s, withdrawn %v) carries %s=%q and no %s: the pool keeps selecting it, so LB-IPAM keeps its address %v",
				key, svc.UID, s.withdrawn, c.b.poolLabel, s.pool, v1alpha1.AnnotationPinnedBy, s.ips))
	}
	var mark string
	mark, s.withdrawn = svc.Labels[v1alpha1.LabelWithdrawn]
	s.letGo = s.withdrawn && mark == c.secret.withdrawn(svc.UID)
	if s.withdrawn && !s.letGo {
		c.violate("bad-mark "+string(svc.UID)+" "+mark, invBadMark,
			fmt.Sprintf("%s (uid %s) carries %s=%q; its mark is %q", key, svc.UID, v1alpha1.LabelWithdrawn, mark, c.secret.withdrawn(svc.UID)))
	}
	s.deleting = svc.DeletionTimestamp != nil
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			s.ips = append(s.ips, normalize(in.IP))
		}
	}
	slices.Sort(s.ips)
	c.services[key] = s
	for _, ip := range s.ips {
		if c.reporters[ip] == nil {
			c.reporters[ip] = map[string]bool{}
		}
		c.reporters[ip][key] = true
		c.checkReporters(ip)
	}
}

// holders splits the Services reporting ip into those holding it and those
// letting go under a valid withdrawn mark.
func (c *checker) holders(ip string) (holding, lettingGo []*serviceState) {
	for _, key := range slices.Sorted(maps.Keys(c.reporters[ip])) {
		if s := c.services[key]; s.letGo {
			lettingGo = append(lettingGo, s)
		} else {
			holding = append(holding, s)
		}
	}
	return holding, lettingGo
}

// sharedByDesign: Services sharing an IP by design all carry one sharing
// key that the driver wrote on every workload among them (a hold and its
// carrier).
func sharedByDesign(holding []*serviceState) bool {
	for _, s := range holding {
		if s.sharedKey == "" || s.sharedKey != holding[0].sharedKey || (!s.placeholder && s.driverKey != s.sharedKey) {
			return false
		}
	}
	return true
}

// checkReporters: a Service letting go under its withdrawn mark is no
// holder (for a bounded time, see sweep); the others must share the IP by
// design, and at most one of them may be a workload: a claim has one
// carrier, and a former carrier lets go (withdrawn) before the next is
// pinned, whatever keys they carry.
func (c *checker) checkReporters(ip string) {
	holding, _ := c.holders(ip)
	if len(holding) < 2 {
		return
	}
	var names, workloads []string
	for _, s := range holding {
		names = append(names, fmt.Sprintf("%s (key %q, driver key %q)", s.key, s.sharedKey, s.driverKey))
		if !s.placeholder {
			workloads = append(workloads, s.key)
		}
	}
	switch {
	case !sharedByDesign(holding):
		c.violate("two-services "+ip+" "+strings.Join(names, ","), invTwoServices, ip+": "+strings.Join(names, ", "))
	case len(workloads) > 1:
		c.violate("two-carriers "+ip+" "+strings.Join(workloads, ","), invTwoCarriers, ip+": "+strings.Join(names, ", "))
	}
}

// onClaim checks that a Bound claim stays Bound to the same addresses until
// it is deleted, and that no two live claims report one address.
func (c *checker) onClaim(cl *v1alpha1.IPAddressClaim, gone bool) {
	defer c.observe()()
	key := cl.Namespace + "/" + cl.Name
	if old, ok := c.claims[key]; ok {
		delete(c.claimUIDs, old.uid)
	}
	if gone {
		delete(c.claims, key)
		c.goneClaims[cl.UID] = true
		return
	}
	s := &claimState{uid: cl.UID, ns: cl.Namespace, name: cl.Name, phase: cl.Status.Phase, deleting: cl.DeletionTimestamp != nil,
		admitted: cl.Status.AdmittedClassName, addresses: int32(len(cl.Spec.Family.Families())), class: cl.ClassName()}
	for _, cond := range cl.Status.Conditions {
		s.atLimit = s.atLimit || cond.Type == v1alpha1.ConditionBound && cond.Reason == v1alpha1.ReasonClassLimitReached
	}
	for _, a := range cl.Status.Addresses {
		s.ips = append(s.ips, normalize(a.Address))
		s.names = append(s.names, a.Name)
	}
	slices.Sort(s.ips)
	c.claims[key] = s
	c.claimUIDs[cl.UID] = s
	if s.deleting {
		return
	}
	first, wasBound := c.boundOnce[cl.UID]
	switch {
	case s.phase == v1alpha1.ClaimBound && !wasBound:
		c.boundOnce[cl.UID] = s.ips
	case s.phase == v1alpha1.ClaimBound && !slices.Equal(first, s.ips):
		c.violate("claim-changed "+string(cl.UID), invClaimChanged,
			fmt.Sprintf("%s: Bound to %v, later to %v", key, first, s.ips))
	case wasBound && s.phase != v1alpha1.ClaimBound:
		c.violate("claim-left "+string(cl.UID), invClaimLeft,
			fmt.Sprintf("%s: Bound to %v, now %s with %v", key, first, s.phase, s.ips))
	}
	for _, ip := range s.ips {
		for other, o := range c.claims {
			if other != key && !o.deleting && slices.Contains(o.ips, ip) {
				pair := []string{key, other}
				slices.Sort(pair)
				c.violate("two-claims "+ip+" "+strings.Join(pair, ","), invTwoClaims,
					fmt.Sprintf("%s reported by claims %s and %s", ip, pair[0], pair[1]))
			}
		}
	}
}

// onAddress checks that no two IPAddresses bind one IP to two claims and
// that an IPAddress never moves from one claim to another.
func (c *checker) onAddress(a *v1alpha1.IPAddress, gone bool) {
	defer c.observe()()
	if gone {
		delete(c.addresses, a.Name)
		delete(c.everBound, a.Name)
		return
	}
	s := &addressState{name: a.Name, uid: a.UID, ip: normalize(a.Spec.Address), class: a.Spec.ClassName,
		reclaim: a.Spec.ReclaimPolicy, phase: a.Status.Phase, deleting: a.DeletionTimestamp != nil}
	if w := a.Status.AssociatedTo; w != nil {
		s.associated = w.DeepCopy()
	}
	if ref := a.Spec.ClaimRef; ref != nil {
		s.claimUID, s.claimKey = ref.UID, ref.Namespace+"/"+ref.Name
	}
	c.addresses[a.Name] = s
	if s.claimUID == "" {
		return
	}
	if prev, ok := c.everBound[a.Name]; ok && prev != s.claimUID {
		c.violate("rebound "+a.Name+" "+string(s.claimUID), invRebound,
			fmt.Sprintf("IPAddress %s (%s) bound to claim uid %s, later to %s", a.Name, s.ip, prev, s.claimUID))
	}
	c.everBound[a.Name] = s.claimUID
	for name, o := range c.addresses {
		if name != a.Name && o.ip == s.ip && o.claimUID != "" && o.claimUID != s.claimUID {
			c.violate("two-claims-ledger "+s.ip, invTwoClaims,
				fmt.Sprintf("%s bound by IPAddress %s to claim uid %s and by %s to %s", s.ip, a.Name, s.claimUID, name, o.claimUID))
		}
	}
}

// onLedger keeps an IPAddressClassUsage; sweep checks it.
func (c *checker) onLedger(l *v1alpha1.IPAddressClassUsage, gone bool) {
	defer c.observe()()
	key := l.Namespace + "/" + l.Name
	if gone {
		delete(c.ledgers, key)
		return
	}
	s := &ledgerState{ns: l.Namespace, class: l.Name, entries: map[types.UID]int32{}, names: map[types.UID]string{},
		addresses: l.Spec.Addresses}
	for _, e := range l.Spec.Claims {
		s.entries[e.UID] = e.Addresses
		s.names[e.UID] = e.Name
	}
	c.ledgers[key] = s
}

// progress is how far from converged the cluster is.
type progress struct {
	Claims, Bound, NotBound, Deleting int
	// Waiting: claims Pending for room under their class's limit while
	// their namespace has none.
	Waiting int
	// Services naming a Bound claim, and those reporting exactly its addresses.
	Carriers, Carrying int
	// Stray: workload Services not naming a Bound claim that report a pool
	// address. Unrecorded: placeholders reporting an IP the ledger lacks.
	Stray, Unrecorded int
	// ServicesDeleting: workload Services whose deletion has not finished
	// (the driver's carrier finalizer waits for the hold to be back).
	ServicesDeleting int
	// Unsettled: bounded invariants broken now, within their bound or not
	// (see sweep).
	Unsettled int
	// StaticUnsettled: claims of the static classes (no driver: the core
	// alone binds them) deleting or neither Bound nor waiting for room.
	StaticUnsettled int
	Examples        []string
}

func (p progress) converged() bool {
	return p.NotBound == 0 && p.Deleting == 0 && p.Carrying == p.Carriers && p.Stray == 0 && p.Unrecorded == 0 &&
		p.ServicesDeleting == 0 && p.Unsettled == 0
}

func (p progress) String() string {
	s := fmt.Sprintf("%d/%d claims Bound (%d deleting, %d waiting for room under a limit), %d/%d Services carry their claim's addresses, "+
		"%d Services still being deleted, %d stray, %d unrecorded in placeholders, %d unsettled",
		p.Bound, p.Claims, p.Deleting, p.Waiting, p.Carrying, p.Carriers, p.ServicesDeleting, p.Stray, p.Unrecorded, p.Unsettled)
	if len(p.Examples) > 0 {
		s += "; e.g. " + strings.Join(p.Examples, "; ")
	}
	return s
}

// progress compares the claims and Services with where they must end.
func (c *checker) progress() progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	var p progress
	example := func(format string, args ...any) {
		if len(p.Examples) < 8 {
			p.Examples = append(p.Examples, fmt.Sprintf(format, args...))
		}
	}
	for key, cl := range c.claims {
		p.Claims++
		driven, known := c.heldClasses[cl.class]
		unsettled := false
		switch {
		case cl.deleting:
			p.Deleting++
			unsettled = true
			example("claim %s still deleting", key)
		case cl.phase == v1alpha1.ClaimBound:
			p.Bound++
		case cl.atLimit && c.room(cl) < cl.addresses:
			p.Waiting++
		default:
			p.NotBound++
			unsettled = true
			example("claim %s %s", key, cl.phase)
		}
		if unsettled && known && !driven {
			p.StaticUnsettled++
		}
	}
	ledger := map[string]bool{}
	for _, a := range c.addresses {
		ledger[a.ip] = true
	}
	for _, key := range slices.Sorted(maps.Keys(c.services)) {
		s := c.services[key]
		if s.placeholder {
			for _, ip := range s.ips {
				if !ledger[ip] {
					p.Unrecorded++
					example("placeholder %s holds %s, which no IPAddress records", key, ip)
				}
			}
			continue
		}
		if s.deleting {
			p.ServicesDeleting++
			example("Service %s still being deleted, reporting %v", key, s.ips)
		}
		ns := key[:strings.IndexByte(key, '/')]
		cl, named := c.claims[ns+"/"+s.claim]
		if s.claim != "" && named && !cl.deleting && cl.phase == v1alpha1.ClaimBound {
			p.Carriers++
			if slices.Equal(s.ips, cl.ips) {
				p.Carrying++
			} else {
				example("Service %s reports %v, its claim %s is Bound to %v", key, s.ips, s.claim, cl.ips)
			}
			continue
		}
		for _, ip := range s.ips {
			if a, err := netip.ParseAddr(ip); err == nil && inPools(a) {
				p.Stray++
				example("Service %s (claim %q) reports %s", key, s.claim, ip)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(c.open)) {
		p.Unsettled++
		example("%s: %s", c.open[key].invariant, c.open[key].detail)
	}
	return p
}

// room is how many more addresses the claim's namespace may hold from the
// class it asks for: its limit less what the admitted claims not being
// deleted ask for. Under c.mu.
func (c *checker) room(cl *claimState) int32 {
	limit, ok := c.limits[cl.class]
	if !ok {
		return 0
	}
	for _, o := range c.claims {
		if o.ns == cl.ns && o.admitted == cl.class && !o.deleting {
			limit -= o.addresses
		}
	}
	return limit
}

// finalCheck sweeps once more and records the end-only invariant (no
// placeholder holds an IP the ledger does not record) and every bounded
// invariant still broken after watchLag, whatever its parties: the run's
// own limit has passed.
func (c *checker) finalCheck() {
	c.sweep()
	p := c.progress()
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Unrecorded > 0 {
		c.violate("unrecorded-at-end", invUnrecordedEnd, p.String())
	}
	now := c.now()
	for key, o := range c.open {
		if age := now.Sub(o.since); age >= watchLag {
			c.violate(key, o.invariant, fmt.Sprintf("%s (still so at the end of the run, for %s)", o.detail, age.Round(time.Second)))
		}
	}
}

func (c *checker) result() ([]Violation, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Collect(maps.Values(c.violations))
	slices.SortFunc(out, func(a, b Violation) int { return a.At.Compare(b.At) })
	return out, c.events
}
