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

package placeholder

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// Allocator is what a backend that holds with placeholders tells Hold of
// the allocator behind it: its name and its pool's, as an admin reads them
// in an address's conditions, and whether the pool rendered for a class
// covers an address (known is false while the pool is not rendered).
type Allocator struct {
	Name   string
	Pool   func(class string) string
	Covers func(ctx context.Context, class string, ip netip.Addr) (covered, known bool)
}

// Hold makes or adopts a's hold (Set.Hold), marked by mark with the sharing
// key secret gives a's hold, and says whether the allocator gives it the
// address: held; lost, where the class's pool no longer covers it; or still
// to come. r is the reader HoldKey looks up reporters with.
func (al Allocator) Hold(ctx context.Context, set *Set, secret *Secret, r client.Reader, a *v1alpha1.IPAddress, class string,
	mark func(ph *corev1.Service, created bool, ip netip.Addr, key string)) (driver.HoldState, error) {
	ip, err := a.IP()
	if err != nil {
		return driver.HoldState{Reason: v1alpha1.ReasonInvalidAddress, Message: err.Error()}, nil
	}
	key, err := secret.HoldKey(ctx, r, a)
	if err != nil {
		return driver.HoldState{}, err
	}
	ph, err := set.Hold(ctx, a, ip, class, func(ph *corev1.Service, created bool) { mark(ph, created, ip, key) })
	if err != nil || ph == nil {
		return driver.HoldState{}, err
	}
	if got, ok := IngressOfFamily(ph, a.Family()); ok && got == ip {
		return driver.HoldState{Held: true, Reason: driver.ReasonHeld,
			Message: fmt.Sprintf("%s assigns %s to placeholder %s/%s", al.Name, ip, ph.Namespace, ph.Name)}, nil
	}
	if covered, known := al.Covers(ctx, class, ip); known && !covered {
		return driver.HoldState{Lost: true, Reason: driver.ReasonBackendLost,
			Message: fmt.Sprintf("%s is outside %s; %s cannot hold it", ip, al.Pool(class), al.Name)}, nil
	}
	return driver.HoldState{Reason: driver.ReasonHoldPending,
		Message: fmt.Sprintf("Placeholder %s/%s waits for %s to assign %s", ph.Namespace, ph.Name, al.Name, ip)}, nil
}
