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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// Scope says where an import looks and what it is allowed to assume.
type Scope struct {
	// Class is the IPAddressClass to import into.
	Class string
	// Namespaces limits the Services considered; empty means all.
	Namespaces []string
	// Selector limits the Services considered by label.
	Selector labels.Selector
	// PlaceholderNamespace is the driver's.
	PlaceholderNamespace string
}

func (sc Scope) includes(s *corev1.Service) bool {
	if len(sc.Namespaces) > 0 && !slices.Contains(sc.Namespaces, s.Namespace) {
		return false
	}
	return sc.Selector == nil || sc.Selector.Matches(labels.Set(s.Labels))
}

// observed is what one run read from the cluster.
type observed struct {
	class    *v1alpha1.IPAddressClass
	services map[string]*corev1.Service // by "namespace/name", in scope
	all      []corev1.Service           // every Service of the cluster
	keep     []netip.Addr               // the addresses of the class's IPAddresses
	inv      Inventory
}

// observe reads the class, every Service, IPAddress and claim, and builds
// the inventory a plan is made from. It reads straight from the API server.
func observe(ctx context.Context, c client.Reader, sc Scope, d importing) (*observed, error) {
	class := &v1alpha1.IPAddressClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: sc.Class}, class); err != nil {
		return nil, fmt.Errorf("reading IPAddressClass %s: %w", sc.Class, err)
	}
	if class.Spec.Provisioner != d.Provisioner() {
		return nil, fmt.Errorf("IPAddressClass %s is served by %q, not by %s", sc.Class, class.Spec.Provisioner, d.name)
	}
	ranges, refuses, err := d.ImportRanges(class)
	if err != nil {
		return nil, fmt.Errorf("IPAddressClass %s: %w", sc.Class, err)
	}
	o := &observed{class: class, services: map[string]*corev1.Service{}, inv: Inventory{
		Class: sc.Class, Driver: d.name, Ranges: ranges, Refuses: refuses,
		Holders: map[netip.Addr][]string{}, Ledger: map[netip.Addr]Ledgered{}, Claims: map[string]Claim{},
	}}

	services := &corev1.ServiceList{}
	if err := c.List(ctx, services); err != nil {
		return nil, fmt.Errorf("listing Services: %w", err)
	}
	o.all = services.Items
	for i := range services.Items {
		s := &services.Items[i]
		view := serviceOf(s, sc.PlaceholderNamespace, d)
		for _, ip := range view.Ingress {
			o.inv.Holders[ip] = append(o.inv.Holders[ip], view.Key())
		}
		if sc.includes(s) {
			o.services[view.Key()] = s
			o.inv.Services = append(o.inv.Services, view)
		}
	}

	addresses := &v1alpha1.IPAddressList{}
	if err := c.List(ctx, addresses); err != nil {
		return nil, fmt.Errorf("listing IPAddresses: %w", err)
	}
	for _, a := range addresses.Items {
		ip, err := a.IP()
		if err != nil {
			continue
		}
		if a.Spec.ClassName == sc.Class {
			o.keep = append(o.keep, ip)
		}
		l := Ledgered{Name: a.Name, ImportedFor: importedFor(&a), Phase: a.Status.Phase}
		if ref := a.Spec.ClaimRef; ref != nil {
			l.Claim = ref.Key()
		}
		if _, ok := o.inv.Ledger[ip]; !ok || l.ImportedFor == "" {
			// A foreign record of the address wins: the import never takes it.
			o.inv.Ledger[ip] = l
		}
	}

	claims := &v1alpha1.IPAddressClaimList{}
	if err := c.List(ctx, claims); err != nil {
		return nil, fmt.Errorf("listing IPAddressClaims: %w", err)
	}
	for _, cl := range claims.Items {
		o.inv.Claims[cl.ClaimKey()] = Claim{ImportedFor: importedFor(&cl), Phase: cl.Status.Phase}
	}
	return o, nil
}

// importing is the driver an import runs for: its backend, which can
// import, and its name.
type importing struct {
	Backend
	driver.Importer
	name string
}

func importedFor(o client.Object) types.UID {
	return types.UID(o.GetLabels()[v1alpha1.LabelImportedFor])
}
