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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Bounded invariants: states that are legitimate for a while (a pass has
// yet to run, MetalLB has yet to take an address back) but must end within
// a bound once the parties that end them can act. The checker re-reads its
// whole picture on every sweep (every second while the run goes on, and
// every quarter second while it waits for convergence), opens a condition
// when a state appears, closes it when the state is gone, and reports a
// violation when it has lasted longer than its bound counted from the
// later of when it appeared and when all of its parties could last act
// (abilities): a leader killed, a driver whose gate is shut or a MetalLB
// that has not caught up since its last start stops that clock. A
// condition may also wait for its party's first look at it (condition.after:
// MetalLB's handling of a withdrawn Service, from its log).
const (
	// settleBound is how long a state a pass or MetalLB must end may last
	// once its parties can act: the driver's own bound for MetalLB to
	// answer (catchup.Patience in internal/driver/metallb/catchup, one
	// minute: beyond it the driver itself takes MetalLB for not handling
	// Services) and the convergence target (60 s).
	settleBound = time.Minute
	// watchLag is how long the harness's separate watches (Services,
	// claims, IPAddresses, ledgers) may disagree about writes that the
	// product orders (a ledger entry before the claim's admission, its
	// removal before the claim goes).
	watchLag = 15 * time.Second
)

// Bounded invariants.
const (
	invWithdrawnTooLong = "a Service letting go under its withdrawn mark still reports an IP another Service holds, past the bound"
	invWrongKey         = "an IP shared under a key that is not its claim's (nor, on a hold, its address's)"
	invPhase            = "an IPAddress's phase disagrees with its claim"
	invClaimAddress     = "a Bound claim lists an IPAddress not bound to it"
	invOutlived         = "a Delete-policy IPAddress outlived its claim"
	invMissingHold      = "an IPAddress of the driver's classes neither held nor carried"
	invLeftover         = "a placeholder outlived its claim or its address"
	invLedger           = "a usage ledger disagrees with the claims it counts"
	invOverLimit        = "a namespace holds more addresses of a class than its limit"
	invRefusedWithRoom  = "a claim waits for room under its class's limit while there is room"
	invWrongPool        = "a pinned Service's Cilium pool label names another class than its address's"
)

// condition is one broken bounded invariant, as a sweep finds it.
type condition struct {
	key, invariant, detail string
	// grace is the bound; 0 reports it at the first sweep that finds it.
	grace time.Duration
	// parties must all be able to act for its clock to run.
	parties []party
	// after, when set, is when the party that ends it first could, given
	// when it began: its clock runs from then, and not before.
	after func(since time.Time) (time.Time, bool)
}

type openCondition struct {
	condition
	since time.Time
}

// sweep opens, keeps and closes the bounded conditions, and reports those
// past their bound.
func (c *checker) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	next := map[string]*openCondition{}
	for _, cd := range c.conditions() {
		o := c.open[cd.key]
		if o == nil {
			o = &openCondition{since: now}
		}
		o.condition = cd
		next[cd.key] = o
		from := o.since
		if len(cd.parties) > 0 {
			able, ok := c.abilities.ableSince(cd.parties)
			if !ok {
				continue
			}
			if able.After(from) {
				from = able
			}
		}
		if cd.after != nil {
			first, ok := cd.after(o.since)
			if !ok {
				continue
			}
			if first.After(from) {
				from = first
			}
		}
		if now.Sub(from) >= cd.grace {
			c.violate(cd.key, cd.invariant, fmt.Sprintf("%s (for %s)", cd.detail, now.Sub(o.since).Round(time.Second)))
		}
	}
	c.open = next
}

// conditions lists what is broken now, under c.mu.
func (c *checker) conditions() []condition {
	var out []condition
	put := func(cd condition) { out = append(out, cd) }
	add := func(key, invariant string, grace time.Duration, parties []party, format string, args ...any) {
		put(condition{key: key, invariant: invariant, detail: fmt.Sprintf(format, args...), grace: grace, parties: parties})
	}
	byIP := map[string][]*addressState{}
	for _, name := range slices.Sorted(maps.Keys(c.addresses)) {
		a := c.addresses[name]
		byIP[a.ip] = append(byIP[a.ip], a)
	}
	// held: the addresses a placeholder is labelled with; holds: the hold
	// placeholders by the address they are labelled with.
	held, holds := map[string]bool{}, map[string]*serviceState{}
	for _, s := range c.services {
		if s.placeholder && !s.deleting && s.addressLabel != "" {
			held[s.addressLabel] = true
			if s.role == v1alpha1.PlaceholderHold {
				holds[s.addressLabel] = s
			}
		}
	}
	c.reporterConditions(byIP, add, put)
	c.addressConditions(byIP, held, add)
	c.placeholderConditions(add)
	c.strayConditions(byIP, holds, add, put)
	c.ledgerConditions(add)
	if c.b.poolLabel != "" {
		c.poolConditions(byIP, add)
	}
	return out
}

type addFunc func(key, invariant string, grace time.Duration, parties []party, format string, args ...any)

var (
	byAllocator  = []party{partyAllocator}
	byCore       = []party{partyCore}
	byDriver     = []party{partyDriver}
	byCoreDriver = []party{partyCore, partyDriver}
	// byDriverAllocator: the driver's pass waits for MetalLB's answer.
	byDriverAllocator = []party{partyDriver, partyAllocator}
)

// reporterConditions: a Service letting go may report an IP beside its
// holder only until MetalLB, able to act and, where its log shows it,
// having looked at the Service since, had settleBound to take it back;
// Services sharing an IP by design share it under the key of the claim
// bound to it, or (holds only) of its IPAddress.
func (c *checker) reporterConditions(byIP map[string][]*addressState, add addFunc, put func(condition)) {
	for _, ip := range slices.Sorted(maps.Keys(c.reporters)) {
		holding, lettingGo := c.holders(ip)
		if len(holding) == 0 {
			continue
		}
		for _, s := range lettingGo {
			// MetalLB takes the address back when it handles the Service,
			// which may wait in its queue behind single events and a full
			// pass long after it caught up (docs/chaos.md, 2026-12-06): the
			// clock runs from its first look at it.
			put(c.afterLook(condition{key: "withdrawn " + ip + " " + string(s.uid), invariant: invWithdrawnTooLong, grace: settleBound,
				parties: byAllocator, detail: fmt.Sprintf("%s, withdrawn, reports %s beside %s", s.key, ip, holding[0].key)}, s.key))
		}
		if len(holding) < 2 || !sharedByDesign(holding) || len(byIP[ip]) != 1 {
			continue
		}
		a := byIP[ip][0]
		key := holding[0].sharedKey
		claimKey, addrKey := "", c.secret.addressKey(a.uid)
		if a.claimUID != "" {
			claimKey = c.secret.claimKey(a.claimUID)
		}
		for _, s := range holding {
			if key == claimKey || s.placeholder && key == addrKey {
				continue
			}
			add("key "+ip+" "+string(s.uid)+" "+key, invWrongKey, watchLag, nil,
				"%s shares %s under %q; IPAddress %s (claim uid %q) is shared under %q (claim) or, on a hold, %q (address)",
				s.key, ip, key, a.name, a.claimUID, claimKey, addrKey)
		}
	}
}

// addressConditions: each IPAddress's phase follows its claim; a Delete
// address goes with its claim; an address of the driver's classes is held
// by a placeholder unless a live Service carries it or it goes with its
// claim; a Bound claim's addresses name it.
func (c *checker) addressConditions(byIP map[string][]*addressState, held map[string]bool, add addFunc) {
	for _, name := range slices.Sorted(maps.Keys(c.addresses)) {
		a := c.addresses[name]
		cl, live := c.claimUIDs[a.claimUID]
		gone := a.claimUID != "" && c.goneClaims[a.claimUID]
		if want, ok := c.wantPhase(a, cl, live, gone, len(byIP[a.ip]) > 1); !ok {
			add("phase "+name+" "+string(a.phase)+" "+string(a.claimUID), invPhase, settleBound, byCore,
				"IPAddress %s is %s, claim %s (uid %q) %s: want %s", name, phaseText(a.phase), a.claimKey, a.claimUID,
				claimText(cl, live, gone), want)
		}
		if gone && a.reclaim == v1alpha1.ReclaimDelete {
			add("outlived "+name+" "+string(a.uid), invOutlived, settleBound, byCoreDriver,
				"IPAddress %s (reclaimPolicy Delete, deleting %v) of claim %s (uid %s), which is gone", name, a.deleting, a.claimKey, a.claimUID)
		}
		if !held[a.name] && c.needsHold(a) {
			add("hold "+name+" "+string(a.uid), invMissingHold, settleBound, byDriver,
				"IPAddress %s (%s, associated to %s) has no placeholder", name, phaseText(a.phase), workloadText(a.associated))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(c.claims)) {
		cl := c.claims[key]
		if cl.deleting || cl.phase != v1alpha1.ClaimBound {
			continue
		}
		for _, name := range cl.names {
			if a, ok := c.addresses[name]; !ok || a.claimUID != cl.uid {
				add("claim-address "+string(cl.uid)+" "+name, invClaimAddress, settleBound, byCore,
					"claim %s is Bound to IPAddress %s, which %s", key, name, boundText(a, ok))
			}
		}
	}
}

// wantPhase says what phase an IPAddress should have and whether it has
// it. Conflict and Lost are the driver's to set; an address whose claim is
// being deleted, or that waits for a claim the harness has not seen, may be
// anything for now.
func (c *checker) wantPhase(a *addressState, cl *claimState, live, gone, duplicate bool) (string, bool) {
	switch {
	case a.deleting || a.phase == v1alpha1.AddressConflict || a.phase == v1alpha1.AddressLost:
		return "", true
	case a.claimUID == "" && a.claimKey == "":
		if duplicate {
			return "Available (or Pending: another IPAddress records its IP)",
				a.phase == v1alpha1.AddressAvailable || a.phase == v1alpha1.AddressPending
		}
		return "Available", a.phase == v1alpha1.AddressAvailable
	case live && !cl.deleting:
		return "Bound", a.phase == v1alpha1.AddressBound
	case gone && a.reclaim == v1alpha1.ReclaimRetain:
		return "Released", a.phase == v1alpha1.AddressReleased
	}
	return "", true
}

// needsHold: an address of the driver's classes needs a placeholder (the
// caller looks for one) unless a Service that still exists carries it, or
// it goes with its claim.
func (c *checker) needsHold(a *addressState) bool {
	if !c.heldClasses[a.class] || a.deleting || len(validation.IsValidLabelValue(a.name)) > 0 || c.goesWithClaim(a) {
		return false
	}
	if w := a.associated; w != nil {
		if s, ok := c.services[w.Namespace+"/"+w.Name]; ok && (w.UID == "" || w.UID == s.uid) {
			return false
		}
	}
	return true
}

// placeholderConditions: a hold goes with its IPAddress, an allocation
// placeholder with its claim.
func (c *checker) placeholderConditions(add addFunc) {
	for _, key := range slices.Sorted(maps.Keys(c.services)) {
		s := c.services[key]
		if !s.placeholder || s.deleting {
			continue
		}
		if !c.leftover(s) {
			continue
		}
		if s.role == v1alpha1.PlaceholderHold {
			add("leftover "+string(s.uid), invLeftover, settleBound, byDriver,
				"hold %s of IPAddress %s, which is gone, reporting %v", key, s.addressName, s.ips)
		} else {
			add("leftover "+string(s.uid), invLeftover, settleBound, byDriver,
				"allocation placeholder %s of claim uid %s, which is gone, reporting %v", key, s.claimUID, s.ips)
		}
	}
}

// poolConditions (Cilium): a Service the driver pins carries the pool label
// of the class whose IPAddress records its pinned IP (Backend.Pin labels it
// from that IPAddress, a hold from its class): the label is all that makes a
// pool select it, and a pool whose blocks lack the IP never assigns it.
// Within the watches' lag, since the IPAddress may be seen after the pin.
func (c *checker) poolConditions(byIP map[string][]*addressState, add addFunc) {
	for _, key := range slices.Sorted(maps.Keys(c.services)) {
		s := c.services[key]
		if s.deleting || len(s.pinned) == 0 {
			continue
		}
		for _, ip := range s.pinned {
			if len(byIP[ip]) != 1 {
				continue
			}
			a := byIP[ip][0]
			if want := labelValue(a.class); !s.hasPool || s.pool != want {
				add("pool "+string(s.uid)+" "+ip+" "+s.pool, invWrongPool, watchLag, nil,
					"%s is pinned to %s, which IPAddress %s of class %s records, and carries %s=%q (present %v): want %q",
					key, ip, a.name, a.class, c.b.poolLabel, s.pool, s.hasPool, want)
			}
		}
	}
}

// labelValue is how the driver writes a class name into a label
// (placeholder.LabelValue): as is when it is a valid label value, otherwise
// "h-" and the first 20 hex digits of its SHA-256.
func labelValue(class string) string {
	if len(validation.IsValidLabelValue(class)) == 0 {
		return class
	}
	sum := sha256.Sum256([]byte(class))
	return "h-" + hex.EncodeToString(sum[:])[:20]
}

// ledgerConditions: each usage ledger's sum is its entries', under its
// class's limit; its entries are the claims admitted to the class in its
// namespace, each counting one address per family; and the admitted claims
// of a namespace never ask for more than the limit.
func (c *checker) ledgerConditions(add addFunc) {
	admitted := map[string]int32{}
	for _, key := range slices.Sorted(maps.Keys(c.claims)) {
		cl := c.claims[key]
		limit, limited := c.limits[cl.admitted]
		if cl.deleting || !limited {
			continue
		}
		lk := cl.ns + "/" + cl.admitted
		admitted[lk] += cl.addresses
		if admitted[lk] > limit {
			add("over-limit claims "+lk, invOverLimit, 0, nil,
				"the claims of namespace %s admitted to class %s ask for more than its %d addresses (e.g. %s)", cl.ns, cl.admitted, limit, key)
		}
		if l, ok := c.ledgers[lk]; !ok || l.entries[cl.uid] == 0 {
			add("ledger-missing "+string(cl.uid), invLedger, watchLag, nil,
				"claim %s is admitted to class %s, and its namespace's ledger does not count it", key, cl.admitted)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(c.claims)) {
		cl := c.claims[key]
		if room := c.room(cl); cl.atLimit && !cl.deleting && room >= cl.addresses {
			add("refused "+string(cl.uid), invRefusedWithRoom, settleBound, byCore,
				"claim %s waits for room under class %s's limit, and its namespace has room for %d of the %d addresses it asks for",
				key, cl.class, room, cl.addresses)
		}
	}
	for _, lk := range slices.Sorted(maps.Keys(c.ledgers)) {
		l := c.ledgers[lk]
		var sum int32
		for _, uid := range slices.Sorted(maps.Keys(l.entries)) {
			n := l.entries[uid]
			sum += n
			cl, ok := c.claimUIDs[uid]
			switch {
			case !ok:
				add("ledger-gone "+lk+" "+string(uid), invLedger, watchLag, nil,
					"ledger %s counts claim %s (uid %s), which is gone", lk, l.names[uid], uid)
			case n != cl.addresses:
				add("ledger-count "+lk+" "+string(uid), invLedger, 0, nil,
					"ledger %s counts %d addresses for claim %s, which asks for %d", lk, n, l.names[uid], cl.addresses)
			}
		}
		if sum != l.addresses {
			add("ledger-sum "+lk, invLedger, 0, nil, "ledger %s says %d addresses, its entries add up to %d", lk, l.addresses, sum)
		}
		if limit, ok := c.limits[l.class]; ok && sum > limit {
			add("over-limit ledger "+lk, invOverLimit, 0, nil, "ledger %s counts %d addresses, the limit is %d", lk, sum, limit)
		}
	}
}

func phaseText(p v1alpha1.IPAddressPhase) string {
	if p == "" {
		return "without a phase"
	}
	return string(p)
}

func claimText(cl *claimState, live, gone bool) string {
	switch {
	case live && cl.deleting:
		return "is being deleted"
	case live:
		return "is " + string(cl.phase)
	case gone:
		return "is gone"
	}
	return "is unknown"
}

func workloadText(w *v1alpha1.WorkloadReference) string {
	if w == nil {
		return "nothing"
	}
	return fmt.Sprintf("Service %s/%s (uid %s), which is gone", w.Namespace, w.Name, w.UID)
}

func boundText(a *addressState, ok bool) string {
	if !ok {
		return "does not exist"
	}
	if a.claimUID == "" {
		return "names no claim"
	}
	return "names claim uid " + string(a.claimUID)
}
