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

package builder

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// ClassOption modifies a class under construction.
type ClassOption func(*v1alpha1.IPAddressClass)

// Class returns an IPAddressClass served by provisioner.
func Class(name, provisioner string, opts ...ClassOption) *v1alpha1.IPAddressClass {
	c := &v1alpha1.IPAddressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.IPAddressClassSpec{Provisioner: provisioner},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Default marks the class as the default class.
func Default() ClassOption {
	return func(c *v1alpha1.IPAddressClass) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, v1alpha1.AnnotationIsDefaultClass, "true")
	}
}

// ReleaseDelay sets spec.releaseDelay.
func ReleaseDelay(d time.Duration) ClassOption {
	return func(c *v1alpha1.IPAddressClass) { c.Spec.ReleaseDelay = &metav1.Duration{Duration: d} }
}

// ClassReclaim sets spec.reclaimPolicy.
func ClassReclaim(p v1alpha1.ReclaimPolicy) ClassOption {
	return func(c *v1alpha1.IPAddressClass) { c.Spec.ReclaimPolicy = p }
}

// Parameters sets spec.parameters from JSON.
func Parameters(json string) ClassOption {
	return func(c *v1alpha1.IPAddressClass) { c.Spec.Parameters = &runtime.RawExtension{Raw: []byte(json)} }
}

// NamespaceSelector lets only namespaces with these labels claim from the class.
func NamespaceSelector(labels map[string]string) ClassOption {
	return func(c *v1alpha1.IPAddressClass) {
		c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: labels}
	}
}

// PerNamespace sets spec.addressesPerNamespace.
func PerNamespace(n int32) ClassOption {
	return func(c *v1alpha1.IPAddressClass) { c.Spec.AddressesPerNamespace = &n }
}

// AddressOption modifies an address under construction.
type AddressOption func(*v1alpha1.IPAddress)

// Address returns an IPAddress carved from its class's range.
func Address(name, ip, class string, opts ...AddressOption) *v1alpha1.IPAddress {
	a := &v1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.IPAddressSpec{
			Address:   ip,
			ClassName: class,
			Source:    v1alpha1.AddressSource{FromClass: &v1alpha1.FromClassSource{}},
		},
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

// PreBound sets claimRef without a UID: a pre-binding the claim completes.
func PreBound(namespace, claim string) AddressOption {
	return BoundTo(namespace, claim, "")
}

// BoundTo sets claimRef.
func BoundTo(namespace, claim string, uid types.UID) AddressOption {
	return func(a *v1alpha1.IPAddress) {
		a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: namespace, Name: claim, UID: uid}
	}
}

// Reclaim sets spec.reclaimPolicy.
func Reclaim(p v1alpha1.ReclaimPolicy) AddressOption {
	return func(a *v1alpha1.IPAddress) { a.Spec.ReclaimPolicy = p }
}

// Held sets the held annotation.
func Held() AddressOption {
	return func(a *v1alpha1.IPAddress) {
		metav1.SetMetaDataAnnotation(&a.ObjectMeta, v1alpha1.AnnotationHeld, "true")
	}
}

// ClaimOption modifies a claim under construction.
type ClaimOption func(*v1alpha1.IPAddressClaim)

// Claim returns an IPAddressClaim.
func Claim(namespace, name string, opts ...ClaimOption) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// OfClass sets spec.className.
func OfClass(class string) ClaimOption {
	return func(c *v1alpha1.IPAddressClaim) { c.Spec.ClassName = class }
}

// Family sets spec.family.
func Family(f v1alpha1.IPFamily) ClaimOption {
	return func(c *v1alpha1.IPAddressClaim) { c.Spec.Family = f }
}

// Named sets spec.addressName.
func Named(address string) ClaimOption {
	return func(c *v1alpha1.IPAddressClaim) { c.Spec.AddressName = address }
}

// ServiceOption modifies a Service under construction.
type ServiceOption func(*corev1.Service)

// Service returns a single-stack IPv4 LoadBalancer Service with one port and
// no node ports.
func Service(namespace, name string, opts ...ServiceOption) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			IPFamilyPolicy:                ptr.To(corev1.IPFamilyPolicySingleStack),
			IPFamilies:                    []corev1.IPFamily{corev1.IPv4Protocol},
			Selector:                      map[string]string{"app": name},
			Ports:                         []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ForClaim annotates the Service with the claim whose addresses it wants.
func ForClaim(claim string) ServiceOption {
	return func(s *corev1.Service) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, v1alpha1.AnnotationIPAddressClaim, claim)
	}
}

// PinnedByHand pins the Service to addresses with MetalLB's annotation, as an
// admin would.
func PinnedByHand(ips string) ServiceOption {
	return func(s *corev1.Service) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, "metallb.io/loadBalancerIPs", ips)
	}
}

// DualStack makes the Service require both families, IPv4 first.
func DualStack() ServiceOption {
	return func(s *corev1.Service) {
		s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	}
}

// ClusterIPOnly makes the Service of type ClusterIP.
func ClusterIPOnly() ServiceOption {
	return func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.AllocateLoadBalancerNodePorts = nil
	}
}

// WithLabel sets a label.
func WithLabel(key, value string) ServiceOption {
	return func(s *corev1.Service) { metav1.SetMetaDataLabel(&s.ObjectMeta, key, value) }
}

// LocalTraffic sets externalTrafficPolicy Local: with its selector, MetalLB
// will not share the Service's address with a Service of another selector.
func LocalTraffic() ServiceOption {
	return func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }
}

// IPv6Only makes the Service single-stack IPv6.
func IPv6Only() ServiceOption {
	return func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }
}

// Port replaces the Service's ports with one TCP port.
func Port(port int32) ServiceOption {
	return func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "p", Port: port, Protocol: corev1.ProtocolTCP}}
	}
}

// OfLoadBalancerClass gives the Service spec.loadBalancerClass: a load
// balancer other than the default one serves it.
func OfLoadBalancerClass(class string) ServiceOption {
	return func(s *corev1.Service) { s.Spec.LoadBalancerClass = &class }
}
