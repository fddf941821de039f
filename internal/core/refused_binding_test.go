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

package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// TestARefusedBindingIsTriedAgain: the API server refuses a binding
// because its address changed after the claim's pass read it, by a write
// that wakes no claim (a driver's conditions: the MetalLB driver writes its
// first ones on the same wake-up as the pass that accepts a pre-binding).
// The claim's pass runs again and binds, for a pre-binding as for an
// Available address the claim names. Before it did, both claims stayed
// Pending, saying the address was Pending or that another claim had bound it.
func TestARefusedBindingIsTriedAgain(t *testing.T) {
	g := NewWithT(t)
	m := &meddler{times: 2, done: map[string]int{}}
	startCoreOn(t, m.config(testCluster.Config))
	ns, class := kit.Namespace(t), testkit.Name(t)
	kit.Make(t, g, b.Class(class, provisioner), b.Address(class+"-n", "198.18.20.2", class))
	g.Eventually(kit.StateOfAddress(g, class+"-n"), timeout, tick).Should(HaveField("Phase", v1alpha1.AddressAvailable))
	// The class's finalizer, which its first address brings, wakes the
	// claims waiting for it: it comes before them, so that only the retry
	// can bind them.
	g.Eventually(func() []string { return kit.Finalizers(g, b.Class(class, "")) }, timeout, tick).
		Should(ContainElement(v1alpha1.FinalizerClassProtection))

	claimThenPreBind(t, g, b.Claim(ns, "pre-bound", b.OfClass(class), b.Named(class+"-p")), b.Address(class+"-p", "198.18.20.1", class))
	kit.Create(g, b.Claim(ns, "named", b.OfClass(class), b.Named(class+"-n")))

	g.Eventually(func() []testkit.ClaimState {
		return []testkit.ClaimState{kit.StateOfClaim(g, ns, "pre-bound")(), kit.StateOfClaim(g, ns, "named")()}
	}, timeout, tick).Should(Equal([]testkit.ClaimState{
		{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-p"}},
		{Phase: v1alpha1.ClaimBound, Reason: v1alpha1.ReasonBound, Addresses: []string{class + "-n"}},
	}))
	g.Expect(m.meddled()).To(Equal(map[string]int{class + "-p": 2, class + "-n": 2}), "each binding was refused twice")
}

// meddler changes an IPAddress, through the test's client, just before each
// of the core's first writes of a binding to it is sent, as a driver's
// status write can: the API server refuses the binding for the version it
// was decided on.
type meddler struct {
	times int
	mu    sync.Mutex
	done  map[string]int
}

// config is cfg with the meddler in the way of its requests.
func (m *meddler) config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if name := bindingOf(req); name != "" {
				if n, ok := m.turn(name); ok {
					a := &v1alpha1.IPAddress{}
					a.Name = name
					patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test/meddled":"%d"}}}`, n)
					if err := k8s.Patch(req.Context(), a, client.RawPatch(types.MergePatchType, patch)); err != nil {
						return nil, err
					}
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// turn counts a write of a binding to name, and says whether to meddle
// with it.
func (m *meddler) turn(name string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done[name] >= m.times {
		return 0, false
	}
	m.done[name]++
	return m.done[name], true
}

// meddled counts the bindings meddled with, by IPAddress.
func (m *meddler) meddled() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.done)
}

// bindingOf is the IPAddress a request writes a binding to (an update of
// it whose spec.claimRef carries a claim's UID), or "".
func bindingOf(req *http.Request) string {
	name, ok := strings.CutPrefix(req.URL.Path, "/apis/"+v1alpha1.GroupVersion.String()+"/ipaddresses/")
	if req.Method != http.MethodPut || !ok || strings.Contains(name, "/") || req.Body == nil {
		return ""
	}
	body, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	a := &v1alpha1.IPAddress{}
	if err != nil || json.Unmarshal(body, a) != nil || a.Spec.ClaimRef == nil || a.Spec.ClaimRef.UID == "" {
		return ""
	}
	return name
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
