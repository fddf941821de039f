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
	"net/netip"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// RecordedElsewhere is the IPAddress that records ip for someone other than
// claim, if one does: an allocator that offers it for claim offers an
// address it should not, and the placeholder gives it back. With
// provisioner set, only an address of a class that provisioner serves
// counts (one of another driver's class is a ledger mismatch for an admin,
// left recorded).
func RecordedElsewhere(ctx context.Context, c client.Reader, ip netip.Addr, claim *v1alpha1.IPAddressClaim, provisioner string) (*v1alpha1.IPAddress, error) {
	list := &v1alpha1.IPAddressList{}
	if err := c.List(ctx, list, client.MatchingFields{manager.IndexAddressByIP: ip.String()}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		a := &list.Items[i]
		if ref := a.Spec.ClaimRef; ref != nil && ref.UID == claim.UID {
			continue
		}
		if provisioner == "" {
			return a, nil
		}
		class := &v1alpha1.IPAddressClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: a.Spec.ClassName}, class); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			continue
		}
		if class.Spec.Provisioner == provisioner {
			return a, nil
		}
	}
	return nil, nil
}
