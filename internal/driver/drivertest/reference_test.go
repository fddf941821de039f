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

package drivertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/controllers"
	"github.com/cozystack/address-controller/internal/driver/drivertest"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/inprocess"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		if testCluster, err = cluster.Start(cluster.Options{WithoutMetalLB: true}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = testCluster.Stop() }()
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
		return m.Run()
	}())
}

// TestReferenceBackend runs the contract against the in-memory reference
// backend: the contract's first customer, with no allocator of its own.
func TestReferenceBackend(t *testing.T) {
	drivertest.Run(t, testCluster.Config, &referenceHarness{books: &books{owner: map[netip.Addr]entry{}, waiting: map[string]map[types.NamespacedName]bool{}, given: map[types.UID]bool{}}})
}

const (
	referenceProvisioner = "reference.drivers.local.sdn.cozystack.io"
	// annotationPin is the reference backend's pin: the addresses a Service
	// gets, comma-separated.
	annotationPin = "reference.drivers.local.sdn.cozystack.io/ips"
)

var (
	_ driver.Backend  = (*reference)(nil)
	_ driver.Releaser = (*reference)(nil)
	_ driver.Watcher  = (*reference)(nil)
)

type referenceHarness struct{ books *books }

// nextRange numbers the ranges handed out in this process: a repeated run
// (-count) must not reuse the ranges of the classes an earlier one left.
var nextRange atomic.Int32

func (h *referenceHarness) Provisioner() string { return referenceProvisioner }

// StartDriver runs the framework with a new reference backend over the same
// books: the books are the allocator, which outlives the driver.
func (h *referenceHarness) StartDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager {
	return inprocess.Start(t, cfg, func(mgr ctrl.Manager) error {
		return controllers.Setup(mgr, &reference{Client: mgr.GetClient(), books: h.books, releasing: map[types.UID]bool{}},
			driver.Options{Provisioner: referenceProvisioner, Concurrency: 4})
	})
}

// Ranges are /28s of 100.64.0.0/12 (RFC 6598), never handed out twice in a
// process (65,536 of them, far more than the contract asks for).
func (*referenceHarness) Ranges() (v4, v6 netip.Prefix) {
	n := nextRange.Add(1)
	return netip.MustParsePrefix(fmt.Sprintf("100.%d.%d.%d/28", 64+n/4096, n/16%256, n%16*16)), netip.MustParsePrefix(fmt.Sprintf("fd00:%x::/124", 0x200+n))
}

func (h *referenceHarness) Parameters(ranges ...netip.Prefix) string {
	raw, _ := json.Marshal(referenceParams{Addresses: ranges})
	return string(raw)
}

// Leftovers are the addresses the books still give someone of class.
func (h *referenceHarness) Leftovers(_ context.Context, _ client.Client, class string) ([]string, error) {
	h.books.mu.Lock()
	defer h.books.mu.Unlock()
	var out []string
	for ip, e := range h.books.owner {
		if e.class == class {
			out = append(out, fmt.Sprintf("%s reserved for %s, held for IPAddress %q", ip, e.reservedFor, e.address))
		}
	}
	return out, nil
}

// books is the reference allocator: who holds each address.
type books struct {
	mu    sync.Mutex
	owner map[netip.Addr]entry
	// waiting are the claims, by class, that found the class exhausted.
	waiting map[string]map[types.NamespacedName]bool
	// given are the Services the backend gave addresses to, by UID: a
	// driver that dies after giving them but before writing its pin leaves
	// a Service with addresses and no pin, which Unpin must still empty.
	given map[types.UID]bool
}

type entry struct {
	class string
	// reservedFor is the claim UID and family the address was reserved for.
	reservedFor string
	// address is the IPAddress holding it, once one does.
	address string
}

func reservationOf(uid types.UID, family v1alpha1.IPFamily) string {
	return string(uid) + "/" + string(family)
}

// referenceParams are a reference class's parameters.
type referenceParams struct {
	Addresses []netip.Prefix `json:"addresses"`
}

func decode(class *v1alpha1.IPAddressClass) (referenceParams, error) {
	var p referenceParams
	if class.Spec.Parameters == nil {
		return p, fmt.Errorf("no parameters")
	}
	dec := json.NewDecoder(bytes.NewReader(class.Spec.Parameters.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, err
	}
	if len(p.Addresses) == 0 {
		return p, fmt.Errorf("no addresses")
	}
	return p, nil
}

func (p referenceParams) contains(ip netip.Addr) bool {
	return slices.ContainsFunc(p.Addresses, func(r netip.Prefix) bool { return r.Contains(ip) })
}

// reference implements driver.Backend in memory: it allocates from the
// class's ranges in its books and writes the Services' load balancer status
// itself. Its holds are entries in the books; no Service ever holds for it.
type reference struct {
	client.Client
	books *books

	mu sync.Mutex
	// releasing are the Services whose pin it withdrew: until the cache
	// shows their status cleared they still report the addresses.
	releasing map[types.UID]bool
}

func (r *reference) RenderClass(_ context.Context, class *v1alpha1.IPAddressClass, keep []netip.Addr) (driver.RenderResult, error) {
	p, err := decode(class)
	if err != nil {
		return driver.RenderResult{Problem: err.Error(), Reason: "InvalidParameters"}, nil
	}
	ranges := make([]ipaddr.Range, 0, len(p.Addresses))
	for _, prefix := range p.Addresses {
		r, err := ipaddr.ParseRange(prefix.Masked().String())
		if err != nil {
			return driver.RenderResult{Problem: err.Error(), Reason: "InvalidParameters"}, nil
		}
		ranges = append(ranges, r)
	}
	// Reserve hands out every address of a prefix.
	res := driver.RenderResult{Capacity: driver.CountRanges(ranges, ipaddr.Range.Size), Families: driver.FamiliesOf(ranges), Ranges: ranges}
	for _, ip := range keep {
		if !p.contains(ip) {
			res.Outside = append(res.Outside, ip)
		}
	}
	return res, nil
}

// Reserve gives the claim the first address of the family that nobody
// holds, records or carries; the same claim and family get the same one.
func (r *reference) Reserve(ctx context.Context, claim *v1alpha1.IPAddressClaim, class *v1alpha1.IPAddressClass, family v1alpha1.IPFamily) (driver.Reservation, error) {
	p, err := decode(class)
	if err != nil {
		return driver.Reservation{Waiting: "the class's parameters are invalid: " + err.Error()}, nil
	}
	r.books.mu.Lock()
	defer r.books.mu.Unlock()
	key := reservationOf(claim.UID, family)
	for ip, e := range r.books.owner {
		if e.reservedFor == key {
			return driver.Reservation{Address: ip}, nil
		}
	}
	for _, prefix := range p.Addresses {
		for ip := prefix.Masked().Addr(); prefix.Contains(ip); ip = ip.Next() {
			if v1alpha1.FamilyOf(ip) != family {
				break
			}
			if _, taken := r.books.owner[ip]; taken {
				continue
			}
			used, err := r.inUse(ctx, ip)
			if err != nil {
				return driver.Reservation{}, err
			}
			if !used {
				r.books.owner[ip] = entry{class: class.Name, reservedFor: key}
				delete(r.books.waiting[class.Name], client.ObjectKeyFromObject(claim))
				return driver.Reservation{Address: ip}, nil
			}
		}
	}
	if r.books.waiting[class.Name] == nil {
		r.books.waiting[class.Name] = map[types.NamespacedName]bool{}
	}
	r.books.waiting[class.Name][client.ObjectKeyFromObject(claim)] = true
	return driver.Reservation{Waiting: fmt.Sprintf("class %s has no free %s address", class.Name, family)}, nil
}

// inUse: an IPAddress records ip, or a Service reports it.
func (r *reference) inUse(ctx context.Context, ip netip.Addr) (bool, error) {
	addrs := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, addrs, client.MatchingFields{manager.IndexAddressByIP: ip.String()}); err != nil {
		return false, err
	}
	svcs := &corev1.ServiceList{}
	if err := r.List(ctx, svcs, client.MatchingFields{driver.IndexServiceByIngressIP: ip.String()}); err != nil {
		return false, err
	}
	return len(addrs.Items)+len(svcs.Items) > 0, nil
}

// Hold enters the address in the books for a, adopting its claim's
// reservation.
func (r *reference) Hold(_ context.Context, a *v1alpha1.IPAddress, class *v1alpha1.IPAddressClass) (driver.HoldState, error) {
	ip, err := a.IP()
	if err != nil {
		return driver.HoldState{Reason: v1alpha1.ReasonInvalidAddress, Message: err.Error()}, nil
	}
	if p, err := decode(class); err != nil || !p.contains(ip) {
		return driver.HoldState{Lost: true, Reason: driver.ReasonBackendLost, Message: fmt.Sprintf("%s is outside class %s's ranges", ip, class.Name)}, nil
	}
	r.books.mu.Lock()
	defer r.books.mu.Unlock()
	reservedFor := ""
	if ref := a.Spec.ClaimRef; ref != nil {
		reservedFor = reservationOf(ref.UID, a.Family())
	}
	e, taken := r.books.owner[ip]
	switch {
	case !taken:
		r.books.owner[ip] = entry{class: class.Name, reservedFor: reservedFor, address: a.Name}
	case e.address == "" && e.reservedFor == reservedFor:
		e.address = a.Name
		r.books.owner[ip] = e
	case e.address != a.Name:
		return driver.HoldState{Reason: driver.ReasonHoldPending,
			Message: fmt.Sprintf("%s is reserved for %s, held for IPAddress %q", ip, e.reservedFor, e.address)}, nil
	}
	return driver.HoldState{Held: true, Reason: driver.ReasonHeld, Message: fmt.Sprintf("The reference books hold %s", ip)}, nil
}

// Release takes a out of the books. The reference backend is no
// driver.Holder: a Service it gives an address to shares its books with the
// entry that holds it, so nothing makes way before a pin.
func (r *reference) Release(_ context.Context, a *v1alpha1.IPAddress) error {
	ip, err := a.IP()
	if err != nil {
		return nil
	}
	r.books.mu.Lock()
	defer r.books.mu.Unlock()
	if e, ok := r.books.owner[ip]; ok && e.address == a.Name {
		delete(r.books.owner, ip)
	}
	return nil
}

// Pin gives the Service the addresses, then writes the pin and its marker:
// a driver that dies between the two finds the Service unpinned and pins it
// again, whereas a pin written first would be taken for done and the
// addresses never given (this backend gives them only here). Without
// addresses, it unpins.
func (r *reference) Pin(ctx context.Context, svc *corev1.Service, p driver.Pin) error {
	if len(p.Addresses) == 0 {
		return r.unpin(ctx, svc, p.Finalizer)
	}
	addrs := p.Addresses
	r.mu.Lock()
	delete(r.releasing, svc.UID)
	r.mu.Unlock()
	r.books.mu.Lock()
	r.books.given[svc.UID] = true
	r.books.mu.Unlock()
	orig := svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = nil
	for _, ip := range addrs {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip.String()})
	}
	if err := r.Status().Patch(ctx, svc, client.MergeFrom(orig)); err != nil {
		return client.IgnoreNotFound(err)
	}
	value := joinAddrs(addrs)
	orig = svc.DeepCopy()
	metav1.SetMetaDataAnnotation(&svc.ObjectMeta, annotationPin, value)
	metav1.SetMetaDataAnnotation(&svc.ObjectMeta, v1alpha1.AnnotationPinnedBy, value)
	if p.Finalizer != "" {
		controllerutil.AddFinalizer(svc, p.Finalizer)
	}
	return client.IgnoreNotFound(r.Patch(ctx, svc, client.MergeFrom(orig)))
}

// unpin takes the addresses back from the Service, then withdraws the pin
// it wrote.
func (r *reference) unpin(ctx context.Context, svc *corev1.Service, finalizer string) error {
	orig := svc.DeepCopy()
	marker, ok := svc.Annotations[v1alpha1.AnnotationPinnedBy]
	r.books.mu.Lock()
	given := r.books.given[svc.UID]
	r.books.mu.Unlock()
	if ok || given {
		r.mu.Lock()
		r.releasing[svc.UID] = true
		r.mu.Unlock()
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			svc.Status.LoadBalancer.Ingress = nil
			if err := r.Status().Patch(ctx, svc, client.MergeFrom(orig)); err != nil {
				return client.IgnoreNotFound(err)
			}
		}
		r.books.mu.Lock()
		delete(r.books.given, svc.UID)
		r.books.mu.Unlock()
		orig = svc.DeepCopy()
		delete(svc.Annotations, v1alpha1.AnnotationPinnedBy)
		if svc.Annotations[annotationPin] == marker {
			delete(svc.Annotations, annotationPin)
		}
	}
	if !controllerutil.RemoveFinalizer(svc, finalizer) && !ok {
		return nil
	}
	return client.IgnoreNotFound(r.Patch(ctx, svc, client.MergeFrom(orig)))
}

func (r *reference) PinnedTo(svc *corev1.Service) ([]netip.Addr, bool) {
	value := svc.Annotations[annotationPin]
	var out []netip.Addr
	for s := range strings.SplitSeq(value, ",") {
		if ip, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
			out = append(out, ip)
		}
	}
	return out, len(out) > 0 && svc.Annotations[v1alpha1.AnnotationPinnedBy] == value
}

// Releasing: the backend withdrew svc's pin (its memory, which no tenant
// can write).
func (r *reference) Releasing(svc *corev1.Service) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.releasing[svc.UID]
}

// Watches wakes the claims waiting for a class when an address of it goes.
func (r *reference) Watches() driver.Watches {
	deleted := manager.DeleteOnly()
	return driver.Watches{Claims: []driver.Watch{{Object: &v1alpha1.IPAddress{}, Predicates: []predicate.Predicate{deleted},
		Handler: handler.EnqueueRequestsFromMapFunc(r.waitingFor)}}}
}

// waitingFor also forgets the hold of the address that went: an admin's
// static address carries no finalizer of the driver's, so its deletion
// never passes through Release (MetalLB's and Cilium's holds go with the
// IPAddress that owns them).
func (r *reference) waitingFor(_ context.Context, o client.Object) []reconcile.Request {
	r.books.mu.Lock()
	defer r.books.mu.Unlock()
	gone := o.(*v1alpha1.IPAddress)
	if ip, err := gone.IP(); err == nil && r.books.owner[ip].address == gone.Name {
		delete(r.books.owner, ip)
	}
	waiting := r.books.waiting[gone.Spec.ClassName]
	reqs := make([]reconcile.Request, 0, len(waiting))
	for key := range waiting {
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}
