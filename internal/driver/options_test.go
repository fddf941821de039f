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

package driver

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func serviceToTrim(typ corev1.ServiceType, policy corev1.ServiceExternalTrafficPolicy) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "tenant", UID: "u1", ResourceVersion: "7",
			Labels:        map[string]string{"app": "web"},
			Annotations:   map[string]string{"a": "b", corev1.LastAppliedConfigAnnotation: "{}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.ServiceSpec{
			Type:                  typ,
			Selector:              map[string]string{"app": "web"},
			Ports:                 []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}},
			ClusterIP:             "100.112.0.10",
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        ptr.To(corev1.IPFamilyPolicySingleStack),
			ExternalTrafficPolicy: policy,
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
}

func trimmed(t *testing.T, s *corev1.Service) *corev1.Service {
	t.Helper()
	out, err := trimService(s)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Service)
}

func TestTrimServiceKeepsOfAPlainServiceItsMetadataAndType(t *testing.T) {
	g := NewWithT(t)
	s := trimmed(t, serviceToTrim(corev1.ServiceTypeClusterIP, ""))
	g.Expect(s.Spec).To(Equal(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}))
	g.Expect(s.Name).To(Equal("web"))
	g.Expect(s.UID).To(BeEquivalentTo("u1"))
	g.Expect(s.Labels).To(HaveKeyWithValue("app", "web"))
	g.Expect(s.Annotations).To(Equal(map[string]string{"a": "b"}))
	g.Expect(s.ManagedFields).To(BeNil())
}

func TestTrimServiceKeepsWhatALoadBalancerServiceIsJudgedBy(t *testing.T) {
	g := NewWithT(t)
	s := trimmed(t, serviceToTrim(corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyCluster))
	g.Expect(s.Spec.Type).To(Equal(corev1.ServiceTypeLoadBalancer))
	g.Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80}}))
	g.Expect(s.Spec.IPFamilies).To(Equal([]corev1.IPFamily{corev1.IPv4Protocol}))
	g.Expect(s.Spec.IPFamilyPolicy).To(HaveValue(Equal(corev1.IPFamilyPolicySingleStack)))
	g.Expect(s.Spec.Selector).To(BeNil(), "under the Cluster policy no sharing rule reads the selector")
	g.Expect(s.Spec.ClusterIP).To(BeEmpty())
	g.Expect(s.Status.LoadBalancer.Ingress).To(HaveLen(1))

	local := trimmed(t, serviceToTrim(corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal))
	g.Expect(local.Spec.Selector).To(Equal(map[string]string{"app": "web"}), "under the Local policy MetalLB compares selectors")
}

func TestTrimClaimKeepsWhatADriverGoesBy(t *testing.T) {
	g := NewWithT(t)
	claim := &v1alpha1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "tenant", UID: "u1",
			Annotations:   map[string]string{v1alpha1.AnnotationProvisioner: "p", corev1.LastAppliedConfigAnnotation: "{}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: v1alpha1.IPAddressClaimSpec{ClassName: "public", Family: v1alpha1.IPv4, AddressName: "ip-192-0-2-1"},
		Status: v1alpha1.IPAddressClaimStatus{
			Phase: v1alpha1.ClaimBound, ClassName: "public", AdmittedClassName: "public",
			Addresses:  []v1alpha1.ClaimedAddress{{Name: "ip-192-0-2-1", Address: "192.0.2.1"}},
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionBound, Status: metav1.ConditionTrue, Reason: "Bound", Message: "Bound to ip-192-0-2-1"}},
		},
	}
	want := claim.DeepCopy()
	want.ManagedFields = nil
	want.Annotations = map[string]string{v1alpha1.AnnotationProvisioner: "p"}
	want.Status.Conditions = nil

	out, err := trimClaim(claim)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(want))
}

func TestLeanAddressKeepsAllButManagedFields(t *testing.T) {
	g := NewWithT(t)
	a := &v1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name: "ip-192-0-2-1", UID: "u1", Finalizers: []string{"f"},
			Annotations:   map[string]string{"a": "b", corev1.LastAppliedConfigAnnotation: "{}"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: v1alpha1.IPAddressSpec{Address: "192.0.2.1", ClassName: "public", ReclaimPolicy: v1alpha1.ReclaimDelete,
			ClaimRef: &v1alpha1.ClaimReference{Namespace: "tenant", Name: "web", UID: "c1"}},
		Status: v1alpha1.IPAddressStatus{Phase: v1alpha1.AddressBound,
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionBound, Status: metav1.ConditionTrue, Reason: "Bound", Message: "Bound to claim tenant/web"}}},
	}
	want := a.DeepCopy()
	want.ManagedFields = nil
	want.Annotations = map[string]string{"a": "b"}

	out, err := leanAddress(a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(want), "the driver patches conditions from the cached copy: none may go")
}
