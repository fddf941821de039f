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
	"time"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Bounded invariants on who reports an address of the classes' ranges,
// whether or not another Service reports it too: the rule of one holder
// per IP (checkReporters) sees only IPs that two Services report, so an
// address handed to one wrong Service, or kept by a Service the driver let
// go of while nothing else asks for it, passed it.
const (
	invStray = "a workload Service keeps an address of the classes it does not carry for a Bound claim, past the bound"
	invKept  = "a Service under its withdrawn mark keeps an address of the classes that no other Service holds, past the bound"
	// invUnrecorded is the end-only invUnrecordedEnd, checked all along.
	invUnrecorded = "a placeholder holds an IP no IPAddress records, past the bound"
	invUnheld     = "a hold does not report its address, past the bound"
)

// strayConditions: every Service reporting an address of the classes'
// ranges is a hold or allocation placeholder of it, or the carrier of the
// Bound claim it belongs to, or is on a bounded way to letting go of it.
//
//   - A workload Service that carries no Bound claim's address, or another
//     one than its claim's (its annotation removed or moved, its claim
//     deleted or not Bound, a pin the driver wrote wrong), loses its pin in
//     the driver's pass. In a shared handoff the hold comes back sharing the
//     address first (docs/design.md, Shared handoff), so while the hold
//     exists and does not report the address the clock also waits for
//     MetalLB, from its first look at the hold; once a placeholder reports
//     it, or where there is no hold, the driver alone must act.
//   - A Service under its withdrawn mark is excluded from the pools'
//     selection, so MetalLB takes the address back when it handles the
//     Service; beside another holder invWithdrawnTooLong bounds it, alone
//     this does.
//   - An allocation placeholder's address is recorded by an IPAddress in the
//     driver's pass (a placeholder of a claim that is gone, or of an address
//     that is, is invLeftover's).
func (c *checker) strayConditions(byIP map[string][]*addressState, holds map[string]*serviceState, add addFunc, put func(condition)) {
	for _, key := range slices.Sorted(maps.Keys(c.services)) {
		s := c.services[key]
		for _, ip := range s.ips {
			if a, err := netip.ParseAddr(ip); err != nil || !inPools(a) {
				continue
			}
			switch {
			case s.letGo:
				if holding, _ := c.holders(ip); len(holding) > 0 {
					continue
				}
				put(c.afterLook(condition{key: "kept " + ip + " " + string(s.uid), invariant: invKept, grace: settleBound,
					parties: byAllocator, detail: fmt.Sprintf("%s, withdrawn, reports %s", key, ip)}, key))
			case s.placeholder:
				if len(byIP[ip]) == 0 && !c.leftover(s) {
					add("unrecorded "+ip+" "+string(s.uid), invUnrecorded, settleBound, byDriver,
						"%s (%s placeholder) reports %s, which no IPAddress records", key, s.role, ip)
				}
			case !c.carries(s, ip):
				put(c.strayCondition(byIP, holds, s, ip))
			}
		}
		if cd, ok := c.unheldCondition(s); ok {
			put(cd)
		}
	}
}

// unheldCondition: a hold reports its address once MetalLB has looked at
// it, unless its address is going. While other Services report the
// address (a former carrier letting go, in the gap order), MetalLB assigns
// the hold only once they have let go; the clock starts again whenever
// they change, from MetalLB's next look at the hold.
func (c *checker) unheldCondition(s *serviceState) (condition, bool) {
	if !s.placeholder || s.deleting || s.letGo || s.role != v1alpha1.PlaceholderHold {
		return condition{}, false
	}
	a, ok := c.addresses[s.addressName]
	if !ok || a.deleting || slices.Contains(s.ips, a.ip) || c.goesWithClaim(a) {
		return condition{}, false
	}
	var others []string
	for _, key := range slices.Sorted(maps.Keys(c.reporters[a.ip])) {
		if key != s.key {
			others = append(others, key)
		}
	}
	return c.afterLook(condition{key: "unheld " + a.ip + " " + string(s.uid) + " " + strings.Join(others, ","), invariant: invUnheld,
		grace: settleBound, parties: byAllocator,
		detail: fmt.Sprintf("hold %s of IPAddress %s (%s) reports %v; %s reported by %v", s.key, a.name, phaseText(a.phase), s.ips, a.ip, others)},
		s.key), true
}

// goesWithClaim: a's reclaim policy is Delete and its claim is gone or
// being deleted.
func (c *checker) goesWithClaim(a *addressState) bool {
	if a.reclaim != v1alpha1.ReclaimDelete || a.claimUID == "" {
		return false
	}
	cl, live := c.claimUIDs[a.claimUID]
	return c.goneClaims[a.claimUID] || live && cl.deleting
}

// strayCondition is the bound on workload Service s reporting ip, which it
// does not carry: see strayConditions.
func (c *checker) strayCondition(byIP map[string][]*addressState, holds map[string]*serviceState, s *serviceState, ip string) condition {
	cd := condition{invariant: invStray, grace: settleBound, parties: byDriver}
	what := fmt.Sprintf("%s (claim %q) reports %s, %s", s.key, s.claim, ip, c.claimOfIP(byIP, ip))
	var hold *serviceState
	if len(byIP[ip]) == 1 {
		hold = holds[byIP[ip][0].name]
	}
	switch holding, _ := c.holders(ip); {
	case slices.ContainsFunc(holding, func(h *serviceState) bool { return h.placeholder }):
		cd.key, cd.detail = "stray "+ip+" "+string(s.uid)+" held", what+"; its hold holds it, the pin stays"
	case hold != nil:
		cd.key, cd.detail = "stray "+ip+" "+string(s.uid)+" hold "+string(hold.uid), what+"; its hold "+hold.key+" reports "+fmt.Sprint(hold.ips)
		cd.parties = byDriverAllocator
		cd = c.afterLook(cd, hold.key)
	default:
		cd.key, cd.detail = "stray "+ip+" "+string(s.uid), what+"; no hold of it"
	}
	return cd
}

// afterLook starts cd's clock at the allocator's first look at Service key
// since cd began, where its log shows it.
func (c *checker) afterLook(cd condition, key string) condition {
	if c.handled != nil {
		cd.after = func(since time.Time) (time.Time, bool) { return c.handled(key, since) }
	}
	return cd
}

// carries: workload Service s names a claim that is Bound to ip and not
// being deleted.
func (c *checker) carries(s *serviceState, ip string) bool {
	if s.claim == "" {
		return false
	}
	cl, ok := c.claims[s.key[:strings.IndexByte(s.key, '/')]+"/"+s.claim]
	return ok && !cl.deleting && cl.phase == v1alpha1.ClaimBound && slices.Contains(cl.ips, ip)
}

// leftover: placeholder s outlived its claim or its address (invLeftover).
func (c *checker) leftover(s *serviceState) bool {
	switch s.role {
	case v1alpha1.PlaceholderHold:
		_, ok := c.addresses[s.addressName]
		return !ok && s.addressName != ""
	case v1alpha1.PlaceholderAllocation:
		return c.goneClaims[s.claimUID]
	}
	return false
}

// claimOfIP says which claim the IPAddress recording ip is bound to.
func (c *checker) claimOfIP(byIP map[string][]*addressState, ip string) string {
	switch as := byIP[ip]; {
	case len(as) == 0:
		return "which no IPAddress records"
	case len(as) > 1:
		return fmt.Sprintf("which %d IPAddresses record", len(as))
	case as[0].claimKey == "":
		return fmt.Sprintf("which IPAddress %s records, bound to no claim (%s)", as[0].name, phaseText(as[0].phase))
	default:
		return fmt.Sprintf("which IPAddress %s binds to claim %s (%s)", as[0].name, as[0].claimKey, phaseText(as[0].phase))
	}
}
