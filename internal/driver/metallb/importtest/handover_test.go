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

package importtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/importer"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
)

// TestHandoverKeepsServicesNamingThePool is issue 41's story: Services the
// admin's auto-assigned pool served name that pool (metallb.io/address-pool,
// or its legacy spelling); they are imported, and the handover removes the
// pool. MetalLB refuses a pinned address from any pool but the one a
// Service names, so the handover must not leave them naming it: through it
// and after it, every imported Service keeps its address, and MetalLB moves
// it into the class's pool without clearing or refusing it.
func TestHandoverKeepsServicesNamingThePool(t *testing.T) {
	controlPlane(t)
	g := NewWithT(t)
	ctx := context.Background()
	mt.StartBoth(t)
	ns := kit.Namespace(t)
	v4, _, v6 := freshPrefixes()
	classRanges := []string{v4 + "0/28", v6 + "/124"}
	legacy := "legacy-" + ns[len(ns)-4:]
	legacyPool(t, g, legacy, classRanges, ns)
	names := []string{"named", "named-legacy", "named-v6", "plain"}
	kit.Create(g, b.Service(ns, "named", annotated("metallb.io/address-pool", legacy)),
		b.Service(ns, "named-legacy", annotated("metallb.universe.tf/address-pool", legacy)),
		b.Service(ns, "named-v6", b.IPv6Only(), annotated("metallb.io/address-pool", legacy)),
		b.Service(ns, "plain"))
	start := map[string]string{}
	for _, name := range names {
		g.Eventually(lbIngress(ns, name), timeout, tick).ShouldNot(BeEmpty(), name)
		start[ns+"/"+name] = lbIngress(ns, name)()
	}
	class := "named-" + ns[len(ns)-4:]
	kit.Make(t, g, b.Class(class, v1alpha1.ProvisionerMetalLB,
		b.Parameters(fmt.Sprintf(`{"addresses": [%q, %q]}`, classRanges[0], classRanges[1]))))
	g.Eventually(renderedReason(g, class), timeout, tick).Should(Equal("OverlapsOtherPool"))
	importStart := settle(g, ns)
	watcher := watchIngress(t, g, start)

	scope := importer.Scope{Class: class, Namespaces: []string{ns}, PlaceholderNamespace: placeholderNS}
	var out bytes.Buffer
	g.Expect(importer.Run(ctx, k8s, backend, importer.Options{Driver: "metallb-iad", Scope: scope, Mode: importer.ModeImport,
		Apply: true, Timeout: timeout}, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(importedClaims(g, ns)).To(HaveLen(len(names)))

	out.Reset()
	g.Expect(importer.Run(ctx, k8s, backend, importer.Options{Driver: "metallb-iad", Scope: scope, Mode: importer.ModeHandover,
		Apply: true, Timeout: timeout}, &out)).To(Succeed())
	t.Log("\n" + out.String())
	g.Expect(poolAddresses(g, legacy)()).To(BeEmpty(), "the legacy pool is gone")
	g.Eventually(renderedReason(g, class), timeout, tick).Should(Equal("Rendered"))

	// MetalLB moved every imported Service into the class's pool, and none
	// lost or changed its address on the way.
	for _, name := range names {
		g.Eventually(func() map[string]string { return kit.Service(g, ns, name).Annotations }, timeout, tick).
			Should(HaveKeyWithValue("metallb.io/ip-allocated-from-pool", params.PoolName(class)),
				"%s: %s", name, strings.Join(eventsOf(g, ns+"/"+name), "\n"))
	}
	g.Consistently(watcher.Violations, 3*time.Second, tick).Should(BeEmpty())
	for _, reason := range []string{"ClearAssignment", "AllocationFailed"} {
		g.Expect(serviceEvents(g, reason)).NotTo(HaveKey(HavePrefix(ns+"/")), reason)
	}
	allocated := serviceEvents(g, "IPAllocated")
	for _, name := range names {
		key := ns + "/" + name
		g.Expect(lbIngress(ns, name)()).To(Equal(start[key]), key)
		g.Expect(allocated[key]).To(BeTemporally("<", importStart), "%s: %s", key, strings.Join(eventsOf(g, key), "\n"))
	}
}

// annotated sets one annotation on a Service under construction.
func annotated(key, value string) b.ServiceOption {
	return func(s *corev1.Service) { metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, value) }
}
