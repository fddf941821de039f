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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHandoverTiesFollowMetalLBsReading: a Service is tied to the old
// pools when the pool MetalLB reads from its annotations (the current
// spelling wins when present, even empty) is another than the class's;
// untying it removes every spelling naming another pool.
func TestHandoverTiesFollowMetalLBsReading(t *testing.T) {
	pool := &unstructured.Unstructured{}
	pool.SetName("iad-public")
	h := &handover{pool: pool}
	const current, legacy = annotationAddressPool, annotationLegacyAddressPool
	cases := []struct {
		name        string
		annotations map[string]string
		keys        []string
		tie         string
	}{
		{"no pool named", nil, nil, ""},
		{"the admin's pool", map[string]string{current: "legacy"}, []string{current},
			"names IPAddressPool legacy in metallb.io/address-pool, and MetalLB gives it no address of another pool"},
		{"the admin's pool, legacy spelling", map[string]string{legacy: "legacy"}, []string{legacy},
			"names IPAddressPool legacy in metallb.universe.tf/address-pool, and MetalLB gives it no address of another pool"},
		{"both spellings", map[string]string{current: "legacy", legacy: "legacy"}, []string{current, legacy},
			"names IPAddressPool legacy in metallb.io/address-pool and metallb.universe.tf/address-pool, and MetalLB gives it no address of another pool"},
		{"an empty current spelling hides the legacy one", map[string]string{current: "", legacy: "legacy"}, nil, ""},
		{"the class's pool", map[string]string{current: "iad-public"}, nil, ""},
		{"the class's pool hides the legacy spelling", map[string]string{current: "iad-public", legacy: "legacy"}, nil, ""},
		{"the legacy spelling, left alone, names the class's pool", map[string]string{current: "legacy", legacy: "iad-public"}, []string{current},
			"names IPAddressPool legacy in metallb.io/address-pool, and MetalLB gives it no address of another pool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			svc := &corev1.Service{}
			svc.Annotations = tc.annotations
			g.Expect(h.tyingKeys(svc)).To(Equal(tc.keys))
			g.Expect(h.Tie(svc)).To(Equal(tc.tie))
		})
	}
}

// TestHandoverReadsMetalLBsRecord: Seen and Moved read the pool MetalLB
// records having allocated from.
func TestHandoverReadsMetalLBsRecord(t *testing.T) {
	g := NewWithT(t)
	pool := &unstructured.Unstructured{}
	pool.SetName("iad-public")
	h := &handover{pool: pool}
	svc := &corev1.Service{}
	g.Expect(h.Seen(svc)).To(BeFalse())
	svc.Annotations = map[string]string{annotationAllocatedFromPool: "legacy"}
	g.Expect(h.Seen(svc)).To(BeTrue())
	g.Expect(h.Moved(svc)).To(BeFalse())
	svc.Annotations[annotationAllocatedFromPool] = "iad-public"
	g.Expect(h.Moved(svc)).To(BeTrue())
}
