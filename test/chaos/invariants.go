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

// Names the driver writes on Services, read here from the outside.
const (
	// labelWithdrawn marks a Service the driver told to let go of its
	// address; MetalLB's pools refuse it, so MetalLB takes the address back.
	labelWithdrawn = "local.sdn.cozystack.io/withdrawn"
	// annotationAllowSharedIP is MetalLB's sharing key.
	annotationAllowSharedIP = "metallb.io/allow-shared-ip"
	// annotationSharingKey records that the driver wrote the sharing key.
	annotationSharingKey = "local.sdn.cozystack.io/sharing-key"
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
	invClaimChanged  = "a Bound claim's addresses changed"
	invClaimLeft     = "a Bound claim left Bound"
	invTwoClaims     = "an address bound to two claims"
	invRebound       = "an IPAddress re-bound to another claim"
	invUnrecordedEnd = "a placeholder holds an IP the ledger does not record (at the end)"
)

type serviceState struct {
	key                  string
	placeholder          bool
	withdrawn            bool
	deleting             bool
	claim                string // the claim annotation, in the Service's namespace
	sharedKey, driverKey string
	ips                  []string
}

type claimState struct {
	uid      types.UID
	phase    v1alpha1.IPAddressClaimPhase
	ips      []string
	deleting bool
}

type addressState struct {
	ip       string
	claimUID types.UID
}

// checker keeps what the watches reported and the invariants' verdicts.
type checker struct {
	mu        sync.Mutex
	services  map[string]*serviceState
	reporters map[string]map[string]bool // IP → Service keys reporting it
	claims    map[string]*claimState     // namespace/name
	// boundOnce is what each claim was first Bound to, by UID.
	boundOnce map[types.UID][]string
	addresses map[string]*addressState // by object name
	// everBound is the last non-empty claim UID each IPAddress was bound to.
	everBound  map[string]types.UID
	violations map[string]Violation
	events     int
}

func newChecker() *checker {
	return &checker{
		services: map[string]*serviceState{}, reporters: map[string]map[string]bool{},
		claims: map[string]*claimState{}, boundOnce: map[types.UID][]string{},
		addresses: map[string]*addressState{}, everBound: map[string]types.UID{},
		violations: map[string]Violation{},
	}
}

// violate records a violation once per key.
func (c *checker) violate(key, invariant, detail string) {
	if _, seen := c.violations[key]; seen {
		return
	}
	c.violations[key] = Violation{Invariant: invariant, Detail: detail, At: time.Now()}
}

func normalize(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	return a.String()
}

// onService updates the reporters of each IP and checks that no two
// Services report one IP unless they share it by design.
func (c *checker) onService(svc *corev1.Service, gone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events++
	key := svc.Namespace + "/" + svc.Name
	if old, ok := c.services[key]; ok {
		for _, ip := range old.ips {
			delete(c.reporters[ip], key)
		}
		delete(c.services, key)
	}
	if gone {
		return
	}
	s := &serviceState{
		key: key, placeholder: svc.Namespace == placeholderNamespace,
		claim:     svc.Annotations[v1alpha1.AnnotationIPAddressClaim],
		sharedKey: svc.Annotations[annotationAllowSharedIP], driverKey: svc.Annotations[annotationSharingKey],
	}
	_, s.withdrawn = svc.Labels[labelWithdrawn]
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

// checkReporters: a Service labelled withdrawn is letting go, and Services
// sharing by design all carry one sharing key that the driver wrote on every
// workload among them (a hold and its carrier).
func (c *checker) checkReporters(ip string) {
	var holding []*serviceState
	for key := range c.reporters[ip] {
		if s := c.services[key]; !s.withdrawn {
			holding = append(holding, s)
		}
	}
	if len(holding) < 2 {
		return
	}
	shared := true
	for _, s := range holding {
		if s.sharedKey == "" || s.sharedKey != holding[0].sharedKey || (!s.placeholder && s.driverKey != s.sharedKey) {
			shared = false
		}
	}
	if shared {
		return
	}
	var names []string
	for _, s := range holding {
		names = append(names, fmt.Sprintf("%s (key %q, driver key %q)", s.key, s.sharedKey, s.driverKey))
	}
	slices.Sort(names)
	c.violate("two-services "+ip+" "+strings.Join(names, ","), invTwoServices, ip+": "+strings.Join(names, ", "))
}

// onClaim checks that a Bound claim stays Bound to the same addresses until
// it is deleted, and that no two live claims report one address.
func (c *checker) onClaim(cl *v1alpha1.IPAddressClaim, gone bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events++
	key := cl.Namespace + "/" + cl.Name
	if gone {
		delete(c.claims, key)
		return
	}
	s := &claimState{uid: cl.UID, phase: cl.Status.Phase, deleting: cl.DeletionTimestamp != nil}
	for _, a := range cl.Status.Addresses {
		s.ips = append(s.ips, normalize(a.Address))
	}
	slices.Sort(s.ips)
	c.claims[key] = s
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
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events++
	if gone {
		delete(c.addresses, a.Name)
		delete(c.everBound, a.Name)
		return
	}
	s := &addressState{ip: normalize(a.Spec.Address)}
	if a.Spec.ClaimRef != nil {
		s.claimUID = a.Spec.ClaimRef.UID
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

// progress is how far from converged the cluster is.
type progress struct {
	Claims, Bound, NotBound, Deleting int
	// Services naming a Bound claim, and those reporting exactly its addresses.
	Carriers, Carrying int
	// Stray: workload Services not naming a Bound claim that report a pool
	// address. Unrecorded: placeholders reporting an IP the ledger lacks.
	Stray, Unrecorded int
	// ServicesDeleting: workload Services whose deletion has not finished
	// (the driver's carrier finalizer waits for the hold to be back).
	ServicesDeleting int
	Examples         []string
}

func (p progress) converged() bool {
	return p.NotBound == 0 && p.Deleting == 0 && p.Carrying == p.Carriers && p.Stray == 0 && p.Unrecorded == 0 && p.ServicesDeleting == 0
}

func (p progress) String() string {
	s := fmt.Sprintf("%d/%d claims Bound (%d deleting), %d/%d Services carry their claim's addresses, "+
		"%d Services still being deleted, %d stray, %d unrecorded in placeholders",
		p.Bound, p.Claims, p.Deleting, p.Carrying, p.Carriers, p.ServicesDeleting, p.Stray, p.Unrecorded)
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
		switch {
		case cl.deleting:
			p.Deleting++
			example("claim %s still deleting", key)
		case cl.phase == v1alpha1.ClaimBound:
			p.Bound++
		default:
			p.NotBound++
			example("claim %s %s", key, cl.phase)
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
	return p
}

// finalCheck records the end-only invariant: no placeholder holds an IP the
// ledger does not record.
func (c *checker) finalCheck() {
	p := c.progress()
	if p.Unrecorded == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violate("unrecorded-at-end", invUnrecordedEnd, p.String())
}

func (c *checker) result() ([]Violation, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Collect(maps.Values(c.violations))
	slices.SortFunc(out, func(a, b Violation) int { return a.At.Compare(b.At) })
	return out, c.events
}
