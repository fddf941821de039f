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
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
)

func TestContestsWarnAtTheThirdYieldThenEveryTenth(t *testing.T) {
	g := NewWithT(t)
	var c contests
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var warned []int
	for i := range 23 {
		if n, warn := c.note("10.0.0.1", start.Add(time.Duration(i)*time.Second)); warn {
			warned = append(warned, n)
		}
	}
	g.Expect(warned).To(Equal([]int{3, 13, 23}))
	// Another address has its own count; old yields fall out of the window.
	_, warn := c.note("10.0.0.2", start)
	g.Expect(warn).To(BeFalse())
	n, _ := c.note("10.0.0.1", start.Add(contestWindow+time.Minute))
	g.Expect(n).To(Equal(1))
}

func TestShareable(t *testing.T) {
	b := &Backend{}
	svc := func(mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		}}
		s.Annotations = map[string]string{}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	cases := []struct {
		name   string
		svc    *corev1.Service
		reason string
	}{
		{"traffic policy Cluster with a selector", svc(nil), ""},
		{"traffic policy Local without a selector", svc(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.Selector = nil
		}), ""},
		{"UDP on the hold's port", svc(func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: placeholder.Port, Protocol: corev1.ProtocolUDP})
		}), ""},
		{"the driver's own key", svc(func(s *corev1.Service) {
			s.Annotations[annotationAllowSharedIP], s.Annotations[v1alpha1.AnnotationSharedBy] = "iad-x", "iad-x"
		}), ""},
		{"traffic policy Local with a selector", svc(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}), "LocalTrafficPolicy"},
		{"TCP on the hold's port", svc(func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: placeholder.Port})
		}), "PortCollision"},
		{"a key of its own", svc(func(s *corev1.Service) { s.Annotations[annotationAllowSharedIP] = "mine" }), "HandWrittenSharingKey"},
		{"a legacy key of its own", svc(func(s *corev1.Service) { s.Annotations[annotationLegacyAllowSharedIP] = "mine" }), "HandWrittenSharingKey"},
		{"a forged marker", svc(func(s *corev1.Service) {
			s.Annotations[annotationAllowSharedIP], s.Annotations[v1alpha1.AnnotationSharedBy] = "mine", "other"
		}), "HandWrittenSharingKey"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ok, reason, msg := b.Shareable(tc.svc)
			g.Expect(ok).To(Equal(tc.reason == ""))
			g.Expect(reason).To(Equal(tc.reason))
			if !ok {
				g.Expect(msg).NotTo(BeEmpty())
			}
		})
	}
}
