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

package steadytest

import (
	"testing"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
)

func TestOrphanedAllocationPlaceholderIsDeleted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := mt.Namespace(t)
	class, _, _ := mt.Class(t, g, false)
	orphan := b.Service(mt.PlaceholderNS, "alloc-00000000-0000-0000-0000-000000000000-v4")
	orphan.Spec.Selector = nil
	orphan.Labels = map[string]string{v1alpha1.LabelPlaceholder: v1alpha1.PlaceholderAllocation,
		v1alpha1.LabelClaimUID: "00000000-0000-0000-0000-000000000000", v1alpha1.LabelClass: class}
	orphan.Annotations = map[string]string{"metallb.io/address-pool": params.PoolName(class), v1alpha1.AnnotationClaim: ns + "/gone"}
	mt.Kit.Create(g, orphan)
	g.Eventually(mt.Kit.Gone(orphan), mt.Timeout, mt.Tick).Should(BeTrue())
}
