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

package metallb

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/manager"
)

// An address the ledger records is free in MetalLB's books whenever no
// Service reports it: during a gap handoff, or after restarts, until its
// rightful holder (its hold, or the Service carrying its claim) is processed
// again. MetalLB may then offer it to an allocation placeholder of another
// claim. Such a placeholder is never deleted (MetalLB would offer the same
// address to its replacement) and never recorded: it yields. It is marked
// withdrawn, which the driver's pools refuse, so MetalLB takes the address
// back; the rightful holder is asked again at once (see driver.Retrier); and
// only once MetalLB has taken the address back (the placeholder's status
// reports nothing) and some other Service reports it does the placeholder
// ask for an address again. Each round parks one contender until the
// rightful holder wins, so the rounds end.

// yield gives an offered address back: the placeholder is marked withdrawn
// and remembers what it gave back.
func (b *Backend) yield(ctx context.Context, ph *corev1.Service, claim *v1alpha1.IPAddressClaim, owner *v1alpha1.IPAddress,
	ip netip.Addr) (driver.Reservation, error) {
	mark, err := b.secret.Withdrawn(ctx, ph)
	if err != nil {
		return driver.Reservation{}, err
	}
	if err := placeholder.PatchMeta(ctx, b, ph, map[string]any{
		placeholder.MetaLabels:      map[string]any{v1alpha1.LabelWithdrawn: mark},
		placeholder.MetaAnnotations: map[string]any{v1alpha1.AnnotationYieldedTo: ip.String()},
	}); err != nil {
		return driver.Reservation{}, err
	}
	class := owner.Spec.ClassName
	rightful := "no claim"
	if ref := owner.Spec.ClaimRef; ref != nil {
		rightful = "claim " + ref.Key()
	}
	log.FromContext(ctx).Info("MetalLB offered an address of the ledger to an allocation placeholder; gave it back",
		"placeholder", ph.Name, "address", ip, "ipaddress", owner.Name)
	b.metrics.yields.WithLabelValues(class).Inc()
	b.recorder.Eventf(claim, owner, corev1.EventTypeNormal, v1alpha1.EventYielded, "Provision",
		"MetalLB offered %s, which is IPAddress %s of %s; the driver gave it back and asks again once its holder has it", ip, owner.Name, rightful)
	if n, warn := b.contests.note(ip.String(), time.Now()); warn {
		b.metrics.contested.WithLabelValues(class).Inc()
		b.recorder.Eventf(owner, claim, corev1.EventTypeWarning, v1alpha1.EventAddressContested, "Provision",
			"MetalLB offered %s to allocation placeholders %d times in the last %s while it belongs to %s; each time the driver gave it back. "+
				"If this goes on, check that MetalLB processes the address's hold or carrier (its events and log)", ip, n, contestWindow, rightful)
	}
	return driver.Reservation{Waiting: fmt.Sprintf("MetalLB offered %s, which is IPAddress %s of %s; giving it back", ip, owner.Name, rightful)}, nil
}

// awaitRightfulHolder keeps a placeholder that yielded an address parked
// until MetalLB has taken the address back (the placeholder reports none)
// and a Service other than an allocation placeholder reports it (or the
// address left the ledger), then lets it ask MetalLB again: MetalLB will not
// offer it the same address while another Service has it. Let go while its
// status still reports the address, the placeholder would keep it should
// MetalLB process it before the holder, as a restarted MetalLB may: it
// processes first the Services that report an address.
func (b *Backend) awaitRightfulHolder(ctx context.Context, ph *corev1.Service, yielded string) (driver.Reservation, error) {
	if len(ph.Status.LoadBalancer.Ingress) > 0 {
		return driver.Reservation{Waiting: fmt.Sprintf("Gave %s back to its holder; waiting for MetalLB to take it back", yielded)}, nil
	}
	waiting := driver.Reservation{Waiting: fmt.Sprintf("Gave %s back to its holder; waiting until the holder has it", yielded)}
	list := &v1alpha1.IPAddressList{}
	if err := b.List(ctx, list, client.MatchingFields{manager.IndexAddressByIP: yielded}); err != nil {
		return driver.Reservation{}, err
	}
	inLedger := false
	for _, a := range list.Items {
		inLedger = inLedger || a.DeletionTimestamp == nil
	}
	if inLedger {
		svcs := &corev1.ServiceList{}
		if err := b.List(ctx, svcs, client.MatchingFields{driver.IndexServiceByIngressIP: yielded}); err != nil {
			return driver.Reservation{}, err
		}
		// Another allocation placeholder offered it meanwhile yields it
		// too; only a Service that keeps it counts.
		held := false
		for i := range svcs.Items {
			s := &svcs.Items[i]
			held = held || s.UID != ph.UID && !b.Set.IsAllocation(s)
		}
		if !held {
			return waiting, nil
		}
	}
	if err := placeholder.PatchMeta(ctx, b, ph, map[string]any{
		placeholder.MetaLabels:      map[string]any{v1alpha1.LabelWithdrawn: nil},
		placeholder.MetaAnnotations: map[string]any{v1alpha1.AnnotationYieldedTo: nil},
	}); err != nil {
		return driver.Reservation{}, err
	}
	log.FromContext(ctx).Info("The yielded address has its holder; asking MetalLB for another", "placeholder", ph.Name, "yielded", yielded)
	return driver.Reservation{Waiting: "Asked MetalLB for another address"}, nil
}

// claimsAwaiting maps a Service to the claims whose allocation placeholders
// gave back an address it reports; an IPAddress, to those that gave back its
// address.
func (b *Backend) claimsAwaiting(ctx context.Context, o client.Object) []reconcile.Request {
	var ips []string
	switch obj := o.(type) {
	case *corev1.Service:
		for _, in := range obj.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP)
		}
	case *v1alpha1.IPAddress:
		ips = append(ips, obj.Spec.Address)
	}
	var reqs []reconcile.Request
	for _, ip := range ips {
		list := &corev1.ServiceList{}
		if err := b.List(ctx, list, client.InNamespace(b.opts.PlaceholderNamespace),
			client.MatchingFields{indexPlaceholderByYielded: ip}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		for i := range list.Items {
			reqs = append(reqs, placeholder.ClaimOf(ctx, &list.Items[i])...)
		}
	}
	return reqs
}

// contestWindow is how far back yields of one address are counted.
const contestWindow = 10 * time.Minute

// contests counts, per address, the yields of the last contestWindow, to
// warn an admin when the driver keeps fighting over one address.
type contests struct {
	mu sync.Mutex
	at map[string][]time.Time
}

// note records a yield of ip at now; it returns the count in the window and
// whether to warn: at the third yield, and at every tenth after that.
func (c *contests) note(ip string, now time.Time) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string][]time.Time{}
	}
	kept := c.at[ip][:0]
	for _, t := range c.at[ip] {
		if now.Sub(t) < contestWindow {
			kept = append(kept, t)
		}
	}
	kept = append(kept, now)
	c.at[ip] = kept
	n := len(kept)
	return n, n == 3 || (n > 3 && (n-3)%10 == 0)
}
