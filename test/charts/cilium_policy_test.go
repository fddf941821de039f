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

package charts

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// ciliumReservedAnnotations are annotations the cilium-iad policy reserves:
// LB-IPAM's, under both of its prefixes (with one Cilium does not read yet,
// which the prefix covers all the same), and the driver's records.
var ciliumReservedAnnotations = []string{
	"lbipam.cilium.io/ips",
	"lbipam.cilium.io/sharing-key",
	"lbipam.cilium.io/sharing-cross-namespace",
	"lbipam.cilium.io/some-later-request",
	"io.cilium/lb-ipam-ips",
	"io.cilium/lb-ipam-sharing-key",
	"io.cilium/lb-ipam-sharing-cross-namespace",
	localv1alpha1.AnnotationPinnedBy,
	localv1alpha1.AnnotationSharedBy,
}

// ciliumReservedFields lists every Service field the cilium-iad policy
// reserves, each with the denial of a write to it.
func ciliumReservedFields() []serviceField {
	var fields []serviceField
	for _, key := range ciliumReservedAnnotations {
		fields = append(fields, annotationField(key, reservedMessage("cilium-iad", "annotation "+key)))
	}
	for _, key := range []string{localv1alpha1.LabelCiliumPool, localv1alpha1.LabelWithdrawn} {
		fields = append(fields, labelField(key, "label "+key+
			" is reserved to the cilium-iad driver, which labels the Services it pins for its pools and those it withdrew a pin from"))
	}
	return append(fields, loadBalancerIPField(reservedMessage("cilium-iad", "spec.loadBalancerIP")))
}

// TestCiliumServiceFieldsPolicy installs the cilium-iad chart's admission
// policy for real and checks, with real users, who may write the Service
// fields it reserves.
func TestCiliumServiceFieldsPolicy(t *testing.T) {
	ctx := t.Context()
	// The MetalLB driver's ServiceAccount may write Services too: it must
	// still be refused the Cilium driver's fields.
	bed := newPolicyBed(t, ciliumChart, "cilium-iad-system", "cilium", ciliumReservedFields(),
		serviceAccountSubject("metallb-iad-system", "metallb-iad"))
	enforced, fields := bed.enforced, bed.fields
	tenant := bed.tenant
	otherDriver := serviceAccount(t, startCluster(t), "metallb-iad-system", "metallb-iad")

	bed.admitsUnreservedFields(ctx, t, func(s *corev1.Service) {
		// Cilium annotations that request no address stay the tenant's.
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, "service.cilium.io/global", "true")
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, "io.cilium/lb-ipam", "not-a-request")
		metav1.SetMetaDataLabel(&s.ObjectMeta, "cilium.drivers.local.sdn.cozystack.io/other", "x")
	})

	bed.deniesEachField(ctx, t)

	t.Run("a denial names every reserved annotation the write touches", func(t *testing.T) {
		g := NewWithT(t)
		annotations := fields[:len(ciliumReservedAnnotations)]
		_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "annotations", annotations...), metav1.CreateOptions{})
		// They come in the order of the Service's annotation map.
		expectDenied(g, err, " are reserved to the cilium-iad driver; reference an IPAddressClaim")
		g.Expect(err.Error()).To(ContainSubstring("annotations "))
		for _, key := range ciliumReservedAnnotations {
			g.Expect(err.Error()).To(ContainSubstring(key))
		}
	})

	t.Run("a denial names every reserved label the write touches", func(t *testing.T) {
		g := NewWithT(t)
		labels := fields[len(ciliumReservedAnnotations) : len(ciliumReservedAnnotations)+2]
		_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "labels", labels...), metav1.CreateOptions{})
		expectDenied(g, err, "labels "+localv1alpha1.LabelCiliumPool+", "+localv1alpha1.LabelWithdrawn+" are reserved to the cilium-iad driver")
	})

	bed.admitsUpdateLeavingFields(ctx, t, func(g Gomega, s *corev1.Service) {
		for _, key := range ciliumReservedAnnotations {
			g.Expect(s.Annotations).To(HaveKeyWithValue(key, firstIP))
		}
		g.Expect(s.Labels).To(HaveKeyWithValue(localv1alpha1.LabelCiliumPool, firstIP))
		g.Expect(s.Labels).To(HaveKeyWithValue(localv1alpha1.LabelWithdrawn, firstIP))
		g.Expect(s.Spec.LoadBalancerIP).To(Equal(firstIP))
	})

	bed.allowlistedMayWriteEveryField(ctx, t)

	t.Run("another driver's ServiceAccount is not allowlisted", func(t *testing.T) {
		g := NewWithT(t)
		marker := fields[len(ciliumReservedAnnotations)-2]
		g.Expect(marker.name).To(Equal("annotation " + localv1alpha1.AnnotationPinnedBy))
		_, err := otherDriver.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "other-driver", marker), metav1.CreateOptions{})
		expectDenied(g, err, marker.denial)
	})

	bed.admitsOutsideTheSelector(ctx, t)
}
