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
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// reasonAllocationFailed is the reason of MetalLB's events on a Service it
// refused an address.
const reasonAllocationFailed = "AllocationFailed"

// The two refusals that can name a Service MetalLB counts on an address.
var (
	inUseBy   = regexp.MustCompile(`address also in use by (\S+)`)
	portInUse = regexp.MustCompile(`port (\w+)/(\d+) is already in use on "([^"]+)"`)
)

// PhantomReconciler ends the allocations MetalLB keeps for placeholders that
// no longer exist.
//
// Design: after a start, MetalLB (v0.15) ignores the events of single
// Services, deletions included, until one full pass over all of them
// succeeds, and a full pass never takes an address back from a Service that
// is gone. A placeholder deleted in that window keeps its address in
// MetalLB's books (a phantom), and MetalLB refuses the address's next hold or
// carrier, naming the phantom ("address also in use by …") or its port
// ("port TCP/9 is already in use on …"). On such a refusal this reconciler
// creates a tombstone: a ClusterIP Service of the phantom's name, which
// MetalLB handles like any Service that stopped being a LoadBalancer: it
// takes the address back, drops the tombstone's ip-allocated-from-pool
// annotation and runs a full pass, which retries the refused Service. The
// tombstone then goes (see Tombstones).
type PhantomReconciler struct {
	*Backend
	// events holds MetalLB's refusals only, apart from the manager's cache.
	events cache.Cache
	// live reads a refused Service the cache does not show yet.
	live client.Reader
}

// +kubebuilder:rbac:groups="",resources=events,verbs=get;list;watch

// Reconcile runs on one of MetalLB's AllocationFailed events.
func (r *PhantomReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ev := &corev1.Event{}
	if err := r.events.Get(ctx, req.NamespacedName, ev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// A refusal of a Service that is gone is moot: nothing waits for the
	// address, and a tombstone would cost MetalLB a full pass for nothing
	// (a driver that starts reads every refusal of the last hour).
	if gone, err := r.gone(ctx, ev.InvolvedObject); gone || err != nil {
		return ctrl.Result{}, err
	}
	names, err := r.suspects(ctx, ev.Message)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, name := range names {
		if err := r.bury(ctx, name, ev.Message, refusedAt(ev)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// gone tells whether the Service ref names no longer exists (or, where ref
// has a uid, is another by now), asking the API server when the cache does
// not show it (yet).
func (r *PhantomReconciler) gone(ctx context.Context, ref corev1.ObjectReference) (bool, error) {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	svc := &corev1.Service{}
	err := r.Get(ctx, key, svc)
	if apierrors.IsNotFound(err) {
		err = r.live.Get(ctx, key, svc)
	}
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return err == nil && ref.UID != "" && svc.UID != ref.UID, err
}

// suspects are the names, in the placeholder namespace, of the Services a
// refusal blames: named outright, or, for a placeholder's port, every name a
// placeholder of that address can have.
func (r *PhantomReconciler) suspects(ctx context.Context, msg string) ([]string, error) {
	names, ip := blamed(msg, r.opts.PlaceholderNamespace)
	if !ip.IsValid() {
		return names, nil
	}
	names = append(names, placeholder.HoldName(ipaddr.ObjectName(ip)))
	list := &v1alpha1.IPAddressList{}
	if err := r.List(ctx, list, client.MatchingFields{manager.IndexAddressByIP: ip.String()}); err != nil {
		return nil, err
	}
	for _, a := range list.Items {
		names = append(names, placeholder.HoldName(a.Name))
		if a.Spec.ClaimRef != nil && a.Spec.ClaimRef.UID != "" {
			names = append(names, placeholder.AllocationName(a.Spec.ClaimRef.UID, v1alpha1.FamilyOf(ip)))
		}
	}
	return names, nil
}

// refusedAt is when MetalLB last made the refusal ev records (zero when the
// event says not).
func refusedAt(ev *corev1.Event) time.Time {
	at := ev.LastTimestamp.Time
	if ev.Series != nil && ev.Series.LastObservedTime.After(at) {
		at = ev.Series.LastObservedTime.Time
	}
	if ev.EventTime.After(at) {
		at = ev.EventTime.Time
	}
	return at
}

// blamed reads a MetalLB refusal: the Services in namespace ns it names as
// holding the address, or the address whose placeholder port is taken.
func blamed(msg, ns string) ([]string, netip.Addr) {
	if m := inUseBy.FindStringSubmatch(msg); m != nil {
		var names []string
		for key := range strings.SplitSeq(m[1], ",") {
			if n, name, ok := placeholder.SplitKey(key); ok && n == ns {
				names = append(names, name)
			}
		}
		return names, netip.Addr{}
	}
	m := portInUse.FindStringSubmatch(msg)
	if m == nil || m[1] != string(corev1.ProtocolTCP) || m[2] != strconv.Itoa(placeholder.Port) {
		return nil, netip.Addr{}
	}
	ip, err := netip.ParseAddr(m[3])
	if err != nil {
		return nil, netip.Addr{}
	}
	return nil, ip
}

// bury creates a tombstone for name unless a Service of that name exists
// (not a phantom) or one was made for it lately.
func (r *PhantomReconciler) bury(ctx context.Context, name, why string, at time.Time) error {
	key := client.ObjectKey{Namespace: r.opts.PlaceholderNamespace, Name: name}
	if err := r.Get(ctx, key, &corev1.Service{}); !apierrors.IsNotFound(err) {
		return err
	}
	if !r.buried.Begin(types.UID(name), time.Now()) {
		return nil
	}
	ts := &corev1.Service{}
	ts.Namespace, ts.Name = key.Namespace, key.Name
	ts.Labels = map[string]string{v1alpha1.LabelManagedBy: params.ManagedByValue, v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderTombstone}
	// MetalLB removes this annotation once it has handled the tombstone; the
	// address's pass, which may wait for the name, wakes when it goes.
	ts.Annotations = map[string]string{annotationAllocatedFromPool: "phantom"}
	if address, ok := strings.CutPrefix(name, placeholder.HoldPrefix); ok && placeholder.HoldName(address) == name {
		ts.Annotations[v1alpha1.AnnotationAddressName] = address
	}
	ts.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone,
		Ports: []corev1.ServicePort{{Name: "placeholder", Port: placeholder.Port, Protocol: corev1.ProtocolTCP}}}
	if err := r.Create(ctx, ts); err != nil {
		r.buried.Forget(types.UID(name))
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	log.FromContext(ctx).Info("MetalLB refused an address for a placeholder that no longer exists; made a tombstone so that it lets the address go",
		"placeholder", name, "refusal", why)
	// MetalLB missed that deletion: it has been ignoring single events, and
	// may still be, unless it has answered from single events since. The
	// driver then asks before it changes anything else.
	r.Refused(ctx, at)
	r.metrics.tombstones.Inc()
	return nil
}

// awaitTombstone keeps a claim waiting while a tombstone has its allocation
// placeholder's name (MetalLB still counted an earlier request of the claim),
// and names the claim on the tombstone, so that the tombstone's deletion
// wakes the claim to ask again.
func (b *Backend) awaitTombstone(ctx context.Context, ts *corev1.Service, claim *v1alpha1.IPAddressClaim) (driver.Reservation, error) {
	if ts.Annotations[v1alpha1.AnnotationClaim] != claim.ClaimKey() {
		orig := ts.DeepCopy()
		if ts.Annotations == nil {
			ts.Annotations = map[string]string{}
		}
		ts.Annotations[v1alpha1.AnnotationClaim] = claim.ClaimKey()
		if err := b.Patch(ctx, ts, client.MergeFrom(orig)); err != nil {
			return driver.Reservation{}, client.IgnoreNotFound(err)
		}
	}
	return driver.Reservation{Waiting: fmt.Sprintf("Waiting for MetalLB to let go of an address it still counts for an earlier request of this claim (tombstone %s)", ts.Name)}, nil
}

// Tombstones deletes a tombstone once MetalLB has handled it.
type Tombstones struct{ *Backend }

// Reconcile runs one pass over a tombstone.
func (r *Tombstones) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ts := &corev1.Service{}
	if err := r.Get(ctx, req.NamespacedName, ts); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ts.DeletionTimestamp != nil || ts.Annotations[annotationAllocatedFromPool] != "" {
		return ctrl.Result{}, nil // MetalLB's removal of the annotation wakes this pass
	}
	return ctrl.Result{}, r.Set.Delete(ctx, ts)
}

// setupPhantoms registers the phantom and tombstone reconcilers. The events
// come from a cache of their own that lists only MetalLB's refusals (a field
// selector on the reason), so that the driver holds no other event.
func (b *Backend) setupPhantoms(mgr ctrl.Manager) error {
	events, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Event{}: {Field: fields.OneTermEqualSelector("reason", reasonAllocationFailed)},
		}})
	if err != nil {
		return err
	}
	if err := mgr.Add(events); err != nil {
		return err
	}
	refusals := predicate.NewTypedPredicateFuncs(func(ev *corev1.Event) bool {
		return ev.Reason == reasonAllocationFailed && ev.InvolvedObject.Kind == "Service"
	})
	parking := driver.NewParking(b)
	if err := ctrl.NewControllerManagedBy(mgr).Named("phantom").
		WatchesRawSource(source.Kind(events, &corev1.Event{}, &handler.TypedEnqueueRequestForObject[*corev1.Event]{}, refusals)).
		WatchesRawSource(parking.Source()).
		Complete(parking.Wrap(&PhantomReconciler{Backend: b, events: events, live: mgr.GetAPIReader()})); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("tombstone").
		For(&corev1.Service{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == b.opts.PlaceholderNamespace &&
				o.GetLabels()[v1alpha1.LabelPlaceholder] == v1alpha1.PlaceholderTombstone
		}))).
		Complete(&Tombstones{Backend: b})
}
