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
	// configuration would not give it to them.
	Blockers []string
	// Unimported are Services holding addresses that move into the class
	// without being imported; they keep them, outside the ledger.
	Unimported []string
}

// planHandover asks the backend how the class's ranges leave the other
// configuration, and finds who that would hurt. o must have been observed
// with an unrestricted scope: the allocator's configuration is
// cluster-wide.
func planHandover(ctx context.Context, c client.Reader, h driver.Handoverer, o *observed, plan Plan) (*Handover, error) {
	planned, err := h.PlanHandover(ctx, c, o.class, o.keep)
	if err != nil {
		return nil, err
	}
	out := &Handover{Handover: planned}
	moving := func(ip netip.Addr) bool {
		return slices.ContainsFunc(planned.Moving(), func(r ipaddr.Range) bool { return r.Contains(ip) })
	}
	for i := range o.all {
		s := &o.all[i]
		for _, ip := range IngressOf(s) {
			if moving(ip) && !planned.Takes(s, ip) {
				out.Blockers = append(out.Blockers, fmt.Sprintf("Service %s/%s holds %s, which class %s would not give it", s.Namespace, s.Name, ip, o.class.Name))
			}
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

// handover carries it out, unless it would take an address away, and waits
// for the driver to render the class.
func handover(ctx context.Context, c client.WithWatch, h *Handover, className, driverName string, timeout time.Duration) error {
	if len(h.Blockers) > 0 {
		return fmt.Errorf("the handover would take addresses away: %v", h.Blockers)
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
	return nil
}
