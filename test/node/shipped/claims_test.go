//go:build node

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

package shipped_test

import (
	"context"
	"fmt"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// claimsSeen is what a watch on a namespace's claims saw.
type claimsSeen struct {
	// violations are what must never be seen: a claim Bound to an address
	// other than the one it was first Bound to, a Bound claim no longer
	// Bound while it lives (until its deletion begins), two live claims
	// Bound to one address, or the watch ending early.
	violations []string
	// bound maps each claim the watch saw Bound to its address, so that a
	// watch that saw nothing cannot pass for one that saw no harm.
	bound map[string]string
}

// kept checks that the watch saw nothing wrong, and saw each claim of want
// Bound to the address want gives it (its first event is each claim as it
// was when the watch began).
func (s claimsSeen) kept(g Gomega, want map[string]string) {
	g.ExpectWithOffset(1, s.violations).To(BeEmpty(), "what the watch on the claims saw")
	for name, address := range want {
		g.ExpectWithOffset(1, s.bound).To(HaveKeyWithValue(name, address), "the watch never saw claim %s Bound to %s", name, address)
	}
}

// watchClaims watches the claims of ns until the returned stop is called,
// which returns what the watch saw.
func watchClaims(g Gomega, ns string) (stop func() claimsSeen) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := watcher.Watch(ctx, &v1alpha1.IPAddressClaimList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	seen := claimsSeen{bound: map[string]string{}}
	first := map[types.UID]string{}   // claim → the address it was first Bound to
	boundBy := map[string]types.UID{} // address → the live claim Bound to it
	names := map[types.UID]string{}
	done := make(chan struct{})
	report := func(format string, args ...any) {
		seen.violations = append(seen.violations, fmt.Sprintf(format, args...))
	}
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*v1alpha1.IPAddressClaim)
			if !ok {
				if ctx.Err() == nil { // stopping the watch may end it with an error event
					report("%s: %v", ev.Type, ev.Object)
				}
				continue
			}
			names[c.UID] = c.Name
			was, wasBound := first[c.UID]
			// Deleting a claim releases its address, which may then go
			// to another claim before the deletion ends.
			if ev.Type == watch.Deleted || c.DeletionTimestamp != nil {
				if wasBound && boundBy[was] == c.UID {
					delete(boundBy, was)
				}
				continue
			}
			addresses := make([]string, 0, len(c.Status.Addresses))
			for _, a := range c.Status.Addresses {
				addresses = append(addresses, a.Address)
			}
			switch {
			case c.Status.Phase == v1alpha1.ClaimBound && len(addresses) == 1:
				ip := addresses[0]
				if wasBound && ip != was {
					report("%s: Bound to %s, then to %s", c.Name, was, ip)
				}
				if other, taken := boundBy[ip]; taken && other != c.UID {
					report("%s and %s both Bound to %s", names[other], c.Name, ip)
				}
				if !wasBound {
					first[c.UID] = ip
				}
				boundBy[ip] = c.UID
				seen.bound[c.Name] = first[c.UID]
			case wasBound:
				report("%s: was Bound to %s, now %s %v", c.Name, was, c.Status.Phase, addresses)
			}
		}
		if ctx.Err() == nil {
			report("the watch on the claims ended early")
		}
	}()
	return func() claimsSeen {
		cancel()
		w.Stop()
		<-done
		return seen
	}
}
