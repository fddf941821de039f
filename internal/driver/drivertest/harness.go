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

package drivertest

import (
	"context"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
)

// Harness is what a backend's test supplies to run the contract suite.
type Harness interface {
	// Provisioner is the name the backend's classes carry in
	// spec.provisioner.
	Provisioner() string

	// StartDriver runs the backend's driver manager against cfg (its
	// controllers.Setup with its Backend, and any controller of the backend's
	// own) until t ends or the manager is stopped. The suite calls it again
	// to restart the driver after a stop, as after a crash. The backend's own
	// allocator, if it has one (MetalLB's controller), is already running.
	StartDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager

	// Ranges returns an IPv4 /28 and an IPv6 /124 that no other class of the
	// cluster uses, a new pair on each call. The suite carves its classes
	// from them.
	Ranges() (v4, v6 netip.Prefix)

	// Parameters returns spec.parameters (JSON) of a class whose addresses
	// are exactly those of ranges, every one of them usable.
	Parameters(ranges ...netip.Prefix) string

	// Leftovers lists the backend's own state still kept for class (API
	// objects it created, reservations it keeps elsewhere), one line each.
	// Once a class and every claim and address of it are gone, it must be
	// empty.
	Leftovers(ctx context.Context, c client.Client, class string) ([]string, error)
}

// HandPinner is implemented by a harness whose backend honours a pin an
// admin writes on a Service by hand, without the driver (MetalLB's
// metallb.io/loadBalancerIPs; LB-IPAM's lbipam.cilium.io/ips with the
// label its pool selects). With it the suite also checks that a hand pin
// on an address the backend holds for a claim is refused: the Service
// never gets the address, and the backend says so on the Service (a
// Warning event, or a condition of its status that is False).
type HandPinner interface {
	// PinByHand sets on svc, before it is created, what an admin writes to
	// ask the backend for ips of class.
	PinByHand(svc *corev1.Service, class string, ips ...netip.Addr)
}

// ServiceHolder is implemented by a harness whose backend holds an address,
// while no workload carries it, with a Service of its own that reports it
// (a driver.Holder), and hands it to a workload by sharing it when it can
// (a driver.Sharer). With it the suite also checks the handoffs: the
// shared one never leaves an address unreported, the gap one is taken
// where the backend cannot share, and a hold deleted behind the driver's
// back comes back; and a driver forced to the gap handoff, then upgraded;
// and a former tenant's copy of its carrier's pin and key is refused.
type ServiceHolder interface {
	// StartGapDriver is StartDriver with the driver forced to the gap
	// handoff (driver.Options.Handoff set to driver.HandoffGap).
	StartGapDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager

	// Unshareable returns the shapes of Service the backend cannot share an
	// address with its hold, by the word the driver gives as why (in the
	// message of the address's Associated condition).
	Unshareable() map[string]b.ServiceOption
	// KeyOf reads the backend's sharing key on svc ("" if none).
	KeyOf(svc *corev1.Service) string
}

// Placeholderer is a Harness whose backend asks its allocator through the
// placeholder package's allocation placeholders (MetalLB, Cilium); the
// reference backend allocates in its own books and is none.
type Placeholderer interface {
	// PlaceholderNamespace is where the driver keeps its placeholders.
	PlaceholderNamespace() string
	// MarkAllocation adds to ph, an allocation placeholder built by hand,
	// what the backend's driver adds to make its allocator serve it from
	// class.
	MarkAllocation(ph *corev1.Service, class string)
}

// Stopper is a Harness whose allocator runs apart from the driver and can
// be down while the driver runs (MetalLB's controller, Cilium's operator):
// a request made meanwhile may outlive the claim's need for it. The
// reference backend allocates in the driver itself and is none.
type Stopper interface {
	// StopAllocator stops the backend's allocator; restart starts it again.
	// The suite calls restart when the spec ends if the spec did not.
	StopAllocator(t *testing.T) (restart func())
	// Requests lists the backend's requests for an address still standing
	// for claim, one line each.
	Requests(ctx context.Context, c client.Client, claim *v1alpha1.IPAddressClaim) ([]string, error)
}

// Prober is implemented by a harness whose driver writes on its own, for
// no claim: a backend's liveness probes (the MetalLB driver asks MetalLB
// questions at every start). The crash specs do not count those writes.
type Prober interface {
	// ProbeWrites returns parts of the request paths of those writes.
	ProbeWrites() []string
}

// Objects lists the objects of list's kind that carry labels, in namespace
// ("" for every namespace or a cluster-scoped kind), one line each, "kind
// namespace/name" ("kind name" when cluster-scoped): what a Harness's Leftovers reports of the API objects
// its backend creates.
func Objects(ctx context.Context, c client.Client, list client.ObjectList, kind, namespace string, labels map[string]string) ([]string, error) {
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var out []string
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		name := obj.GetName()
		if ns := obj.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		out = append(out, kind+" "+name)
		return nil
	})
	return out, err
}

// AllocationPlaceholders lists the allocation placeholders in namespace ns
// made for claim: what Stopper's Requests reports for a backend that asks
// its allocator through placeholder Services.
func AllocationPlaceholders(ctx context.Context, c client.Client, ns string, claim *v1alpha1.IPAddressClaim) ([]string, error) {
	return Objects(ctx, c, &corev1.ServiceList{}, "Service", ns,
		map[string]string{v1alpha1.LabelClaimUID: string(claim.UID), v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation})
}
