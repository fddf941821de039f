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

package importer

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Service is what planning reads of a Service.
type Service struct {
	Namespace, Name string
	UID             types.UID
	Type            corev1.ServiceType
	Deleting        bool
	// Placeholder: a placeholder Service of the driver (in its namespace,
	// with its label).
	Placeholder bool
	// Families are spec.ipFamilies.
	Families []v1alpha1.IPFamily
	// Ingress are the addresses the load balancer reports, IPv4 first.
	Ingress []netip.Addr
	// Pin is the hand-written or imported pin, if any, as the backend reads
	// it.
	Pin []netip.Addr
	// Claim is the claim the Service's annotation names.
	Claim string
}

// Key is "namespace/name".
func (s Service) Key() string { return s.Namespace + "/" + s.Name }

// Ledgered is what planning reads of an IPAddress.
type Ledgered struct {
	Name        string
	ImportedFor types.UID
	// Claim is "namespace/name" of claimRef, empty when unbound.
	Claim string
	Phase v1alpha1.IPAddressPhase
}

// Claim is what planning reads of an IPAddressClaim.
type Claim struct {
	ImportedFor types.UID
	Phase       v1alpha1.IPAddressClaimPhase
}

// Inventory is everything a plan is computed from.
type Inventory struct {
	Class string
	// Driver names the driver, for its placeholders.
	Driver string
	// Ranges are the class's ranges, and Refuses says why the allocator
	// never gives an address in them ("" when it may); nil refuses none.
	Ranges  []ipaddr.Range
	Refuses func(netip.Addr) string
	// Services are those in scope, in any order.
	Services []Service
	// Holders lists, for each address, every Service in the cluster (in
	// scope or not) whose load balancer reports it, as "namespace/name".
	Holders map[netip.Addr][]string
	// Ledger are the IPAddresses by address.
	Ledger map[netip.Addr]Ledgered
	// Claims are the claims by "namespace/name".
	Claims map[string]Claim
}

// Actions of an Import.
const (
	ActionImport   = "import"
	ActionResume   = "resume"
	ActionImported = "imported"
)

// Import is one Service to bring under a claim.
type Import struct {
	Service   Service
	Addresses []netip.Addr
	Family    v1alpha1.IPFamily
	// Claim is the name of the claim, in the Service's namespace.
	Claim string
	// Action: ActionImport (nothing exists yet), ActionResume (an earlier
	// run created part of it) or ActionImported (nothing left to do).
	Action string
	// Note explains the claim's name when it is not the Service's.
	Note string
}

// Skip is a Service the import leaves alone, and why.
type Skip struct {
	Service   Service
	Addresses []netip.Addr
	Reason    string
}

// Plan is what an import does.
type Plan struct {
	Class   string
	Imports []Import
	Skips   []Skip
}

// MakePlan decides, for every Service in scope that holds or asks for an
// address, whether it can be imported into the class, under which claim,
// or why not. It reads nothing but inv.
func MakePlan(inv Inventory) Plan {
	services := slices.Clone(inv.Services)
	slices.SortFunc(services, func(a, b Service) int { return strings.Compare(a.Key(), b.Key()) })
	plan := Plan{Class: inv.Class}
	var pending []Import
	for _, s := range services {
		if !inv.concerns(s) {
			continue
		}
		if reason := inv.skipReason(s); reason != "" {
			plan.Skips = append(plan.Skips, Skip{Service: s, Addresses: s.Ingress, Reason: reason})
			continue
		}
		pending = append(pending, Import{Service: s, Addresses: s.Ingress, Family: familyOf(s.Ingress)})
	}
	plan.Imports = inv.nameClaims(pending)
	return plan
}

// concerns: the Service holds an address, or is pinned into the class; a
// placeholder only when it holds an address of the class.
func (inv Inventory) concerns(s Service) bool {
	if s.Placeholder {
		return slices.ContainsFunc(s.Ingress, inv.inRanges)
	}
	return len(s.Ingress) > 0 || slices.ContainsFunc(s.Pin, inv.inRanges)
}

func (inv Inventory) inRanges(ip netip.Addr) bool {
	return slices.ContainsFunc(inv.Ranges, func(r ipaddr.Range) bool { return r.Contains(ip) })
}

// refusal says why the allocator would not give ip in the class, or "".
func (inv Inventory) refusal(ip netip.Addr) string {
	if !inv.inRanges(ip) {
		return fmt.Sprintf("address %s is outside class %s", ip, inv.Class)
	}
	if inv.Refuses != nil {
		if why := inv.Refuses(ip); why != "" {
			return fmt.Sprintf("address %s %s", ip, why)
		}
	}
	return ""
}

// skipReason says why s cannot be imported, or "".
func (inv Inventory) skipReason(s Service) string {
	switch {
	case s.Placeholder:
		return "a placeholder of " + inv.Driver
	case s.Type != corev1.ServiceTypeLoadBalancer:
		return fmt.Sprintf("type %s, not LoadBalancer", s.Type)
	case s.Deleting:
		return "being deleted"
	case len(s.Ingress) == 0:
		return fmt.Sprintf("pinned to %s, but its load balancer reports no address for it", joinIPs(s.Pin))
	}
	for _, ip := range s.Ingress {
		if why := inv.refusal(ip); why != "" {
			return why
		}
	}
	if s.Claim != "" {
		if c, ok := inv.Claims[s.Namespace+"/"+s.Claim]; !ok || c.ImportedFor != s.UID {
			return fmt.Sprintf("already names IPAddressClaim %s", s.Claim)
		}
	}
	for _, ip := range s.Ingress {
		for _, h := range inv.Holders[ip] {
			if h != s.Key() {
				return fmt.Sprintf("shares %s with Service %s; a claim's address goes to one Service", ip, h)
			}
		}
		if l, ok := inv.Ledger[ip]; ok && l.ImportedFor != s.UID {
			return fmt.Sprintf("%s is in the ledger already: IPAddress %s, %s", ip, l.Name, ledgerState(l))
		}
	}
	if len(s.Pin) > 0 && !slices.Equal(sorted(s.Pin), s.Ingress) {
		return fmt.Sprintf("pinned to %s but holds %s", joinIPs(s.Pin), joinIPs(s.Ingress))
	}
	if have := familiesOf(s.Ingress); !slices.Equal(have, sortedFamilies(s.Families)) {
		return fmt.Sprintf("has IP families %v but holds %s; a claim needs one address of each family", s.Families, joinIPs(s.Ingress))
	}
	return ""
}

func ledgerState(l Ledgered) string {
	if l.Claim != "" {
		return "bound to IPAddressClaim " + l.Claim
	}
	if l.Phase == "" {
		return "not bound"
	}
	return string(l.Phase)
}

// nameClaims names the claim of each import. An import an earlier run began
// keeps its claim. Otherwise the claim is named after the Service; when
// another claim has that name, "<service>-imported", then
// "<service>-imported-2", "-3", … whichever is free first. Services that can
// have their own name get it before any Service is given a suffixed one.
func (inv Inventory) nameClaims(pending []Import) []Import {
	taken := map[string]bool{}
	for key := range inv.Claims {
		taken[key] = true
	}
	ours := map[types.UID]string{}
	for key, c := range inv.Claims {
		if c.ImportedFor != "" {
			if cur, ok := ours[c.ImportedFor]; !ok || key < cur {
				ours[c.ImportedFor] = key
			}
		}
	}
	var suffixed []int
	for i := range pending {
		im := &pending[i]
		s := im.Service
		switch key := s.Namespace + "/" + s.Name; {
		case s.Claim != "":
			im.Claim = s.Claim
		case ours[s.UID] != "":
			im.Claim = strings.TrimPrefix(ours[s.UID], s.Namespace+"/")
		case !taken[key]:
			im.Claim = s.Name
			taken[key] = true
		default:
			suffixed = append(suffixed, i)
		}
	}
	for _, i := range suffixed {
		im := &pending[i]
		s := im.Service
		for n := 1; ; n++ {
			name := s.Name + "-imported"
			if n > 1 {
				name = fmt.Sprintf("%s-%d", name, n)
			}
			if key := s.Namespace + "/" + name; !taken[key] {
				im.Claim = name
				taken[key] = true
				break
			}
		}
		im.Note = fmt.Sprintf("IPAddressClaim %s exists already", s.Name)
	}
	for i := range pending {
		pending[i].Action = inv.action(pending[i])
	}
	return pending
}

// action: how much of an import exists already.
func (inv Inventory) action(im Import) string {
	s := im.Service
	c, claimed := inv.Claims[s.Namespace+"/"+im.Claim]
	recorded := 0
	for _, ip := range im.Addresses {
		if l, ok := inv.Ledger[ip]; ok && l.ImportedFor == s.UID {
			recorded++
		}
	}
	switch {
	case claimed && c.ImportedFor == s.UID && c.Phase == v1alpha1.ClaimBound && recorded == len(im.Addresses) && s.Claim == im.Claim:
		return ActionImported
	case claimed && c.ImportedFor == s.UID || recorded > 0 || s.Claim != "":
		return ActionResume
	}
	return ActionImport
}

func familyOf(ips []netip.Addr) v1alpha1.IPFamily {
	if len(ips) == 2 {
		return v1alpha1.Dual
	}
	return v1alpha1.FamilyOf(ips[0])
}

func familiesOf(ips []netip.Addr) []v1alpha1.IPFamily {
	out := make([]v1alpha1.IPFamily, 0, len(ips))
	for _, ip := range ips {
		out = append(out, v1alpha1.FamilyOf(ip))
	}
	return sortedFamilies(out)
}

func sortedFamilies(fs []v1alpha1.IPFamily) []v1alpha1.IPFamily {
	out := slices.Clone(fs)
	slices.Sort(out)
	return out
}

func sorted(ips []netip.Addr) []netip.Addr {
	out := slices.Clone(ips)
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

func joinIPs(ips []netip.Addr) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return strings.Join(s, ",")
}

// serviceOf reads s as planning does: placeholders are those of the
// driver's namespace, and pins are read by the backend.
func serviceOf(s *corev1.Service, placeholderNamespace string, d importing) Service {
	out := Service{Namespace: s.Namespace, Name: s.Name, UID: s.UID, Type: s.Spec.Type, Deleting: s.DeletionTimestamp != nil,
		Placeholder: s.Namespace == placeholderNamespace && s.Labels[v1alpha1.LabelPlaceholder] != "",
		Claim:       s.Annotations[v1alpha1.AnnotationIPAddressClaim]}
	for _, f := range s.Spec.IPFamilies {
		if f == corev1.IPv6Protocol {
			out.Families = append(out.Families, v1alpha1.IPv6)
		} else {
			out.Families = append(out.Families, v1alpha1.IPv4)
		}
	}
	out.Ingress = IngressOf(s)
	out.Pin, _ = d.PinnedTo(s)
	return out
}

// IngressOf are the addresses s's load balancer reports, IPv4 first.
func IngressOf(s *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, in := range s.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil {
			out = append(out, ip)
		}
	}
	return sorted(out)
}
