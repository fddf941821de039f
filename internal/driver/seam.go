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

package driver

import (
	"context"
	"errors"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// The seam between the framework and a backend. A backend implements
// Backend; everything else in this file is a capability that only some
// backends have, which the framework discovers by type assertion. Each says
// which backend needs it and why. A backend's name (the provisioner its
// classes name) is not part of the seam: it is given to Setup in Options.

// Backend is what the driver needs from the system that really holds
// addresses. The driver decides when; the backend knows how.
type Backend interface {
	// RenderClass turns a class into backend configuration. keep lists the
	// addresses of the class that must stay valid whatever the class's
	// parameters now say. A Problem in the result is bad input, reported on
	// the class; an error is retried.
	RenderClass(ctx context.Context, class *v1alpha1.IPAddressClass, keep []netip.Addr) (RenderResult, error)

	// Reserve asks the backend for a new address of family for claim, and
	// returns it once the backend has picked one. It must be idempotent and
	// safe to repeat after a crash at any point: the same claim and family
	// yield the same reservation.
	Reserve(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass, family v1alpha1.IPFamily) (Reservation, error)

	// Hold keeps address a of class reserved in the backend while no
	// workload carries it, adopting a reservation made for it by Reserve if
	// there is one.
	Hold(ctx context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass) (HoldState, error)

	// Release gives back whatever the backend keeps for a (its reservation,
	// its hold): a goes, or stands aside as a duplicate of another
	// IPAddress. It must be idempotent.
	Release(ctx context.Context, a *v1alpha1.IPAddress) error

	// Pin brings the pin the driver writes on svc to p: with addresses,
	// it steers the backend to give svc exactly those and records that the
	// driver wrote the pin; without, it withdraws a pin the driver wrote
	// (one someone else wrote is left alone) and p.Finalizer if svc carries
	// it.
	Pin(ctx context.Context, svc *corev1.Service, p Pin) error

	// PinnedTo returns the addresses svc is pinned to and whether the driver
	// wrote that pin.
	PinnedTo(svc *corev1.Service) (addrs []netip.Addr, byDriver bool)
}

// Pin is what the driver asks of a Service's pin.
type Pin struct {
	// Addresses are the addresses svc gets, IPv4 first; none withdraws the
	// driver's pin.
	Addresses []netip.Addr
	// Class is the addresses' class; nil when Addresses is empty.
	Class *v1alpha1.IPAddressClass
	// SharingKey, when set, lets the workload share its addresses with their
	// holds (a shared handoff, see Sharer); empty pins for a gap handoff.
	SharingKey string
	// Finalizer is added to svc with a pin, and taken off it with a
	// withdrawal.
	Finalizer string
}

// ErrNotReady is what a backend's write fails with while its Gate is shut.
var ErrNotReady = errors.New("the backend is not ready for changes")

// Gate is what a backend implements when there are times it must not be
// changed. MetalLB needs it: after a start, it ignores the events of single
// Services until one full pass over all of them succeeds, and any change
// made meanwhile either makes that pass fail (so it ignores events longer)
// or is lost (a deletion it never hears of). While the gate is shut, the
// backend's writes fail with ErrNotReady; the driver parks the pass that
// tried and runs it again once the gate opens (Parking).
type Gate interface {
	// Ready returns nil when the backend may be changed now, or an error
	// wrapping ErrNotReady once it has made sure that Opened will be closed
	// when it may.
	Ready(ctx context.Context) error
	// Opened returns a channel that is closed when the gate is open: at
	// once if it is open now, or the next time it opens.
	Opened() <-chan struct{}
}

// Holder is what a backend implements when it holds an address through an
// object of its own that a workload cannot share by default (a placeholder
// Service): the hold must make way before the workload is pinned, and, while
// it stands, it legitimately carries the address. A backend without it keeps
// its reservation in its own books while a workload carries the address.
// MetalLB and Cilium LB-IPAM need it: neither keeps an address for no
// Service, so each holds one with a placeholder Service.
type Holder interface {
	// Unhold releases the backend's hold on a, so that a workload can take
	// the address. Only the carrier's pass calls it: once the carrier
	// reports the address (shared handoff), or before the carrier is pinned
	// (gap handoff). released is true once the driver's cache shows the hold
	// gone: a workload is pinned only then, so that the backend, which sees
	// the same events in the same order, finds the address free when the
	// workload asks for it. A hold going away wakes the Service pass of the
	// address's carrier (Watches.Services).
	Unhold(ctx context.Context, a *v1alpha1.IPAddress) (released bool, err error)

	// IsHolder reports whether svc is the backend's own hold on a: such a
	// Service legitimately carries the address.
	IsHolder(svc *corev1.Service, a *v1alpha1.IPAddress) bool
}

// Releaser is what a backend implements when a Service it told to let go
// of its addresses may still report them for a while (its pin withdrawn,
// or an allocation placeholder giving back an address it was offered).
// MetalLB and Cilium LB-IPAM need it: each takes an address back only when
// it next processes the Service.
type Releaser interface {
	// Releasing reports whether svc is letting go of its addresses because
	// the driver told it to: until the backend notices, svc still reports
	// them, and is no thief. The answer must rest on something a tenant
	// cannot forge.
	Releasing(svc *corev1.Service) bool
}

// Watcher is what a backend implements when its own objects' changes must
// wake a claim, an address, a class or a Service: MetalLB's pools and
// nodes, Cilium's pools, the reference backend's books.
type Watcher interface {
	// Watches are the extra event sources.
	Watches() Watches
}

// Sharer is what a backend implements when it can hand an address between
// its hold and a workload without ever counting the address free: the
// workload joins the hold's sharing, the hold goes only once the backend
// gives the workload the address, and on the way back the hold returns,
// sharing it, before the workload's pin goes. MetalLB (allow-shared-ip)
// and Cilium LB-IPAM (sharing-key) both can; a backend without it gets gap
// handoffs, as both do with --handoff=gap.
type Sharer interface {
	// Shareable says whether the backend lets svc share addresses with
	// their holds; if not, a reason (a CamelCase word) and why.
	Shareable(svc *corev1.Service) (ok bool, reason, message string)
	// SharingKey is the key that the holds of claim's addresses carry, and
	// that a workload must carry to share them. It must not be guessable
	// from what a tenant can read.
	SharingKey(ctx context.Context, claim *v1alpha1.IPAddressClaim) (string, error)
	// SharedKey is the sharing key the driver wrote on svc for a shared
	// handoff, or "".
	SharedKey(svc *corev1.Service) string
}

// Retrier is what a backend implements when it does not retry by itself a
// request it refused. MetalLB needs it: it does not retry an allocation it
// refused until its next full pass. The driver asks it again, by writing a
// new retry token on the pinned Service (a workload, or, when svc is nil,
// a's hold), exactly when what blocked the request let go. For a Retrier,
// the framework also puts the token of the state it acts in into the
// context of every Hold and Pin (RetryToken), so that what they write
// already carries it.
type Retrier interface {
	// Retry makes the backend reconsider svc unless svc already carries
	// token.
	Retry(ctx context.Context, a *v1alpha1.IPAddress, svc *corev1.Service, token string) error
}

type retryKey struct{}

// RetryToken is the retry token the framework computed for the Hold or Pin
// that ctx was given to; "" for a backend that is no Retrier.
func RetryToken(ctx context.Context) string {
	token, _ := ctx.Value(retryKey{}).(string)
	return token
}

// WithRetryToken is ctx carrying token, for the framework to hand a
// Retrier's Hold and Pin.
func WithRetryToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, retryKey{}, token)
}

// Importer is what a backend implements when its allocator may already
// have given addresses in a class's ranges to plain Services before the
// driver served the class: `<driver> import` (internal/driver/importer)
// brings those Services under claims, each keeping its address. The import
// reads their pins with PinnedTo. MetalLB has it, for clusters that ran
// MetalLB before the driver.
type Importer interface {
	// ImportRanges reads class's parameters: the ranges its allocator gives
	// addresses from, and why it never gives an address in them ("" when it
	// may; a nil func when it gives them all). An error is bad parameters.
	ImportRanges(class *v1alpha1.IPAddressClass) (ranges []ipaddr.Range, refuses func(netip.Addr) string, err error)
	// ImportPin is the annotation an import pins a Service with (addresses,
	// comma-separated), so that the allocator keeps giving it what it has.
	ImportPin() string
}

// Handoverer is what an Importer implements when the allocator's own
// configuration (an admin's pool) may cover a class's ranges, which keeps
// the driver from rendering the class: once the Services there are
// imported, `<driver> import --handover` moves the ranges into the class's
// configuration. MetalLB has it: its admins' IPAddressPools.
type Handoverer interface {
	// PlanHandover works out, reading with c, how class's ranges leave the
	// allocator's other configuration; keep are the addresses of the
	// class's IPAddresses.
	PlanHandover(ctx context.Context, c client.Reader, class *v1alpha1.IPAddressClass, keep []netip.Addr) (Handover, error)
}

// Handover is one planned handover.
type Handover interface {
	// Moving are the ranges that leave the other configuration.
	Moving() []ipaddr.Range
	// Takes says whether the class's configuration, once handed over,
	// gives svc the address ip it has; if not, the handover would take it
	// away.
	Takes(svc *corev1.Service, ip netip.Addr) bool
	// Tie says what on svc itself would make the allocator take away an
	// address that Takes gives it, once the configuration is handed over
	// (for MetalLB, an annotation naming a pool that shrinks), or "" when
	// nothing does. It reads as what the Service does: "names ...".
	Tie(svc *corev1.Service) string
	// Untie lifts svc's tie, writing with c, in a way that the allocator
	// keeps svc's addresses through (nothing when svc has none). The
	// handover unties the Services it imported before Apply, and refuses
	// to run while any other Service is tied.
	Untie(ctx context.Context, c client.Client, svc *corev1.Service) error
	// Seen says whether the allocator has processed svc as read (after an
	// Untie, it reports having done so): Apply waits until it has seen
	// every Service holding an address that moves, so that it never meets
	// the new configuration with an older copy of one.
	Seen(svc *corev1.Service) bool
	// Moved says whether the allocator reports giving svc its addresses
	// from the class's configuration: once Apply is done, the handover
	// waits for it of every Service holding an address that moves.
	Moved(svc *corev1.Service) bool
	// Steps say what Apply writes, one line each; none when nothing
	// overlaps the class.
	Steps() []string
	// Apply writes it, in an order in which the allocator never takes an
	// assigned address away.
	Apply(ctx context.Context, c client.Client) error
}

// Reservation is a backend's answer to Reserve.
type Reservation struct {
	// Address is the reserved address; invalid while the backend has not
	// picked one yet.
	Address netip.Addr
	// Waiting says, while Address is invalid, what the backend waits for.
	Waiting string
}

// HoldState is what Hold found.
type HoldState struct {
	// Held is true when the backend holds the address for its owner.
	Held bool
	// Lost is true when the backend can never hold the address again as
	// things stand (it is outside every range the backend serves).
	Lost bool
	// Reason and Message explain the state, for the address's Held condition.
	Reason, Message string
}

// RenderResult is a backend's answer to RenderClass.
type RenderResult struct {
	// Problem is bad input, reported on the class; nothing was rendered.
	Problem string
	// Reason names the kind of problem, for the class's condition.
	Reason string
	// Unusable says why what was rendered cannot serve the class's addresses
	// (no node would announce them), reported on the class with
	// UnusableReason; the rendering stands.
	Unusable, UnusableReason string
	// Outside lists kept addresses outside the class's ranges.
	Outside []netip.Addr
	// Capacity is how many addresses the class's ranges offer, per family,
	// as the backend hands them out (CountRanges); the driver reports it in
	// the class's status.capacity.
	Capacity Counts
	// Families are the address families of the class's ranges, IPv4
	// first; the driver provisions no other.
	Families []v1alpha1.IPFamily
	// Ranges are the class's ranges, as the backend reads its parameters:
	// an address that comes or goes inside them changes only the class's
	// counts, not its rendering.
	Ranges []ipaddr.Range
}

// Watch is one extra event source of a controller.
type Watch struct {
	Object     client.Object
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
}

// Watches are the backend's extra event sources, per controller.
type Watches struct {
	Claims, Addresses, Services, Classes []Watch
}

// FamiliesOf lists the families of ranges, IPv4 first, for
// RenderResult.Families.
func FamiliesOf(ranges []ipaddr.Range) []v1alpha1.IPFamily {
	var v4, v6 bool
	for _, r := range ranges {
		v4, v6 = v4 || r.Is4(), v6 || !r.Is4()
	}
	var out []v1alpha1.IPFamily
	if v4 {
		out = append(out, v1alpha1.IPv4)
	}
	if v6 {
		out = append(out, v1alpha1.IPv6)
	}
	return out
}
