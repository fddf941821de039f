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
	"flag"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// Options tune the driver's controllers.
type Options struct {
	// Provisioner is the driver's name: the classes that name it are the
	// ones it serves. Required.
	Provisioner string
	// Concurrency bounds how many objects of each kind are reconciled at once.
	Concurrency int
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
	// Handoff is HandoffAuto (the shared handoff wherever the backend can
	// share, the gap handoff elsewhere) or HandoffGap (always the gap
	// handoff; for comparison and as an escape hatch).
	Handoff string
}

// Handoff modes of Options.Handoff.
const (
	HandoffAuto = "auto"
	HandoffGap  = "gap"
)

// BindFlags registers the options every driver's binary has.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Concurrency, "concurrency", 4, "How many objects of each kind are reconciled at once.")
	fs.StringVar(&o.Handoff, "handoff", HandoffAuto,
		"How addresses move between their hold and a Service: auto (shared where the backend can share the address, gap elsewhere) or gap (always gap).")
}

// ManagerOptions trims the Services and claims in the manager's cache to
// what the framework and a Service-based backend read: a driver watches
// every Service and claim of the cluster, and most of their bytes (ports'
// details, kubectl's last-applied copy, managed fields, the claims'
// conditions) would only cost memory. The framework never writes a Service
// back whole (it patches) and never writes a claim. Of Services, claims and
// addresses the cache keeps one copy of each string many of them repeat
// (manager.Intern).
func (o *Options) ManagerOptions(opts *ctrl.Options) {
	if opts.Cache.ByObject == nil {
		opts.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.Cache.ByObject[&corev1.Service{}] = cache.ByObject{Transform: trimService}
	opts.Cache.ByObject[&v1alpha1.IPAddressClaim{}] = cache.ByObject{Transform: trimClaim}
	opts.Cache.ByObject[&v1alpha1.IPAddress{}] = cache.ByObject{Transform: leanAddress}
}

// leanMeta drops what no reconciler reads of any cached object's metadata
// (managed fields, kubectl's last-applied copy) and interns the rest.
func leanMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	delete(m.Annotations, corev1.LastAppliedConfigAnnotation)
	manager.InternMeta(m)
}

// trimClaim drops a claim's conditions, kubectl's last-applied copy and
// its managed fields: the core writes the conditions for people to read,
// and a driver goes by the claim's spec, phase and addresses.
func trimClaim(obj any) (any, error) {
	c, ok := obj.(*v1alpha1.IPAddressClaim)
	if !ok {
		return obj, nil
	}
	leanMeta(&c.ObjectMeta)
	c.Status.Conditions = nil
	c.Spec.ClassName, c.Status.ClassName = manager.Intern(c.Spec.ClassName), manager.Intern(c.Status.ClassName)
	c.Status.AdmittedClassName = manager.Intern(c.Status.AdmittedClassName)
	c.Spec.Family, c.Status.Phase = manager.Intern(c.Spec.Family), manager.Intern(c.Status.Phase)
	return c, nil
}

// leanAddress drops an address's managed fields and kubectl's last-applied
// copy and interns the strings addresses repeat. It keeps all else: the
// driver writes an address's status as a merge patch of its conditions,
// which replaces the whole list.
func leanAddress(obj any) (any, error) {
	a, ok := obj.(*v1alpha1.IPAddress)
	if !ok {
		return obj, nil
	}
	leanMeta(&a.ObjectMeta)
	a.Spec.ClassName, a.Spec.ReclaimPolicy = manager.Intern(a.Spec.ClassName), manager.Intern(a.Spec.ReclaimPolicy)
	if ref := a.Spec.ClaimRef; ref != nil {
		ref.Namespace = manager.Intern(ref.Namespace)
	}
	a.Status.Phase = manager.Intern(a.Status.Phase)
	manager.InternConditions(a.Status.Conditions)
	return a, nil
}

// trimService keeps, of a LoadBalancer Service, each port's protocol and
// number, the traffic policy, the families, the requested IP and the load
// balancer status, and the selector only under the Local traffic policy,
// where load balancers' sharing rules compare it. Of any other Service it
// keeps the type: nothing the driver does reads more of one, and a Service
// that becomes a LoadBalancer comes back whole with the update. Most of a
// cluster's Services are such plain ones, and a selector is the largest part
// of what is left of them.
func trimService(obj any) (any, error) {
	s, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	leanMeta(&s.ObjectMeta)
	s.Status = corev1.ServiceStatus{LoadBalancer: s.Status.LoadBalancer}
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Spec = corev1.ServiceSpec{Type: s.Spec.Type}
		return s, nil
	}
	ports := make([]corev1.ServicePort, len(s.Spec.Ports))
	for i, p := range s.Spec.Ports {
		ports[i] = corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}
	}
	spec := corev1.ServiceSpec{
		Type:                  s.Spec.Type,
		IPFamilies:            s.Spec.IPFamilies,
		IPFamilyPolicy:        s.Spec.IPFamilyPolicy,
		LoadBalancerIP:        s.Spec.LoadBalancerIP, //nolint:staticcheck // load balancers still honour it
		Ports:                 ports,
		ExternalTrafficPolicy: s.Spec.ExternalTrafficPolicy,
	}
	if spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		spec.Selector = s.Spec.Selector
	}
	s.Spec = spec
	return s, nil
}

// IndexServiceByIngressIP indexes the driver's cache of Services by the IPs
// their load balancer reports; a backend may look Services up through it.
const IndexServiceByIngressIP = "driver.serviceByIngressIP"

// IndexServiceByClaim indexes the driver's cache of Services by the claim
// they name (v1alpha1.AnnotationIPAddressClaim), as "namespace/name"; a
// backend may look Services up through it.
const IndexServiceByClaim = "driver.serviceByClaim"
