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
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// Handover is what handing the class's ranges over from the allocator's
// other configuration does.
type Handover struct {
	driver.Handover
	// Blockers are Services that would lose their address: the class's
	// configuration would not give it to them, or they are tied to the
	// other configuration and were not imported.
	Blockers []string
	// Unimported are Services holding addresses that move into the class
	// without being imported; they keep them, outside the ledger.
	Unimported []string
	// Unties are the imported Services tied to the other configuration
	// (driver.Handover's Tie): the handover unties them first.
	Unties []Tied
	// movers are the Services holding an address that moves, as read.
	movers []*corev1.Service
}

// Tied is an imported Service the handover unties, and what ties it.
type Tied struct {
	// Service is "namespace/name".
	Service string
	Tie     string
	svc     *corev1.Service
}

// Steps are the backend's, after one line per Service untied.
func (h *Handover) Steps() []string {
	out := make([]string, 0, len(h.Unties))
	for _, u := range h.Unties {
		out = append(out, fmt.Sprintf("untie imported Service %s first: it %s; that goes, and its pin and claim keep its addresses", u.Service, u.Tie))
	}
	return append(out, h.Handover.Steps()...)
}

// planHandover asks the backend how the class's ranges leave the other
// configuration, and finds who that would hurt. o must have been observed
// with an unrestricted scope: the allocator's configuration is
// cluster-wide. A Service tied to the other configuration is untied first
// when the import brought it under a claim; the handover never rewrites
// a Service it did not import, and refuses to run while one is tied.
func planHandover(ctx context.Context, c client.Reader, h driver.Handoverer, o *observed, plan Plan) (*Handover, error) {
	planned, err := h.PlanHandover(ctx, c, o.class, o.keep)
	if err != nil {
		return nil, err
	}
	out := &Handover{Handover: planned}
	moving := func(ip netip.Addr) bool {
		return slices.ContainsFunc(planned.Moving(), func(r ipaddr.Range) bool { return r.Contains(ip) })
	}
	imported := map[types.UID]bool{}
	for _, im := range plan.Imports {
		if im.Action == ActionImported {
			imported[im.Service.UID] = true
		}
	}
	for i := range o.all {
		s := &o.all[i]
		held := slices.DeleteFunc(IngressOf(s), func(ip netip.Addr) bool { return !moving(ip) })
		if len(held) == 0 {
			continue
		}
		out.movers = append(out.movers, s)
		for _, ip := range held {
			if !planned.Takes(s, ip) {
				out.Blockers = append(out.Blockers, fmt.Sprintf("Service %s/%s holds %s, which class %s would not give it", s.Namespace, s.Name, ip, o.class.Name))
			}
		}
		switch tie := planned.Tie(s); {
		case tie == "":
		case imported[s.UID]:
			out.Unties = append(out.Unties, Tied{Service: s.Namespace + "/" + s.Name, Tie: tie, svc: s})
		default:
			out.Blockers = append(out.Blockers, fmt.Sprintf("Service %s/%s holds %s but %s, so it would lose it: import it first, or remove that by hand",
				s.Namespace, s.Name, joinIPs(held), tie))
		}
	}
	for _, im := range plan.Imports {
		if im.Action != ActionImported {
			out.Unimported = append(out.Unimported, fmt.Sprintf("Service %s (%s): %s", im.Service.Key(), joinIPs(im.Addresses), im.Action))
		}
	}
	for _, s := range plan.Skips {
		if slices.ContainsFunc(s.Addresses, moving) {
			out.Unimported = append(out.Unimported, fmt.Sprintf("Service %s (%s): skipped, %s", s.Service.Key(), joinIPs(s.Addresses), s.Reason))
		}
	}
	return out, nil
}

// handover carries it out, unless it would take an address away: it
// unties the imported Services and waits until the allocator has seen
// every Service that holds an address that moves as it is now; then it
// hands the configuration over, waits for the driver to render the class,
// and for the allocator to give every such Service its addresses from it.
// Each wait has a timeout of its own.
func handover(ctx context.Context, c client.WithWatch, h *Handover, className, driverName string, timeout time.Duration) error {
	if len(h.Blockers) > 0 {
		return fmt.Errorf("the handover would take addresses away: %v", h.Blockers)
	}
	for _, u := range h.Unties {
		if err := h.Untie(ctx, c, u.svc); err != nil {
			return fmt.Errorf("untying Service %s: %w", u.Service, err)
		}
	}
	if err := h.awaitMovers(ctx, c, timeout, false); err != nil {
		return fmt.Errorf("nothing was handed over: %w", err)
	}
	if err := h.Apply(ctx, c); err != nil {
		return err
	}
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reason string
	err := until(deadline, c, &v1alpha1.IPAddressClassList{}, client.ObjectKey{Name: className}, func(ctx context.Context) (bool, error) {
		class := &v1alpha1.IPAddressClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: className}, class); err != nil {
			return false, err
		}
		for _, cond := range class.Status.Conditions {
			if cond.Type == v1alpha1.ConditionRendered {
				reason = cond.Reason + ": " + cond.Message
				return cond.Status == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the configuration is handed over, but IPAddressClass %s is not Rendered yet (%s); is %s running? %w", className, reason, driverName, err)
	}
	if err := h.awaitMovers(ctx, c, timeout, true); err != nil {
		return fmt.Errorf("the configuration is handed over, but %w", err)
	}
	return nil
}

// awaitMovers waits, with a timeout of its own, until the allocator has
// seen every Service holding an address that moves untied (before: moved
// false) or gives it its addresses from the class's configuration (after).
// A Service gone or re-created since is no longer waited for; one that
// stops reporting an address it held, or is tied again, fails the wait.
func (h *Handover) awaitMovers(ctx context.Context, c client.WithWatch, timeout time.Duration, moved bool) error {
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lost, late []string
	for _, was := range h.movers {
		key := client.ObjectKeyFromObject(was)
		var why string
		check := func(ctx context.Context) (bool, error) {
			now := &corev1.Service{}
			if err := c.Get(ctx, key, now); err != nil {
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			}
			if now.UID != was.UID || now.DeletionTimestamp != nil {
				return true, nil
			}
			if missing := slices.DeleteFunc(IngressOf(was), func(ip netip.Addr) bool { return slices.Contains(IngressOf(now), ip) }); len(missing) > 0 {
				return false, fmt.Errorf("Service %s no longer reports %s", key, joinIPs(missing))
			}
			if tie := h.Tie(now); tie != "" {
				return false, fmt.Errorf("Service %s %s again", key, tie)
			}
			why = "has not been processed by the allocator as it is now"
			if moved {
				why = "is not yet given its addresses from the class's configuration"
				return h.Moved(now), nil
			}
			return h.Seen(now), nil
		}
		done, err := check(context.WithoutCancel(deadline))
		if err == nil && !done {
			err = until(deadline, c, &corev1.ServiceList{}, key, check)
		}
		switch {
		case err == nil:
		case deadline.Err() != nil:
			late = append(late, fmt.Sprintf("Service %s %s", key, why))
		default:
			lost = append(lost, err.Error())
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("services lost their addresses or were tied again: %v", lost)
	}
	if len(late) > 0 {
		return fmt.Errorf("the allocator has not caught up in %v (is it running?): %v; run the same command again", timeout, late)
	}
	return nil
}
