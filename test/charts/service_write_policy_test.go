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
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/test/cluster"
)

// driverReach is what one driver writes on a Service outside its placeholder
// namespace, as its Pin, Unpin and Retry write it
// (internal/driver/<backend>/pins.go): strategic merge patches of metadata.
type driverReach struct {
	chart, provisioner string
	// pin and unpin are the metadata of a shared handoff's pin and of its
	// withdrawal; retry, when the backend has one, asks again.
	pin, unpin, retry map[string]any
	// pinned are the annotations and labels a pin leaves on the Service.
	pinnedAnnotations, pinnedLabels []string
	// foreignPins steer the backend but are never the driver's to write.
	foreignPins []string
}

// The values the driver's patches write.
const (
	reachIP    = "203.0.113.20"
	reachKey   = "claim-key"
	reachMark  = "withdrawn-mark"
	reachClass = "public"
)

func metallbReach() driverReach {
	const ips, shared, retry = "metallb.io/loadBalancerIPs", "metallb.io/allow-shared-ip", localv1alpha1.AnnotationRetry
	carrier := localv1alpha1.DriverCarrierFinalizer(localv1alpha1.ProvisionerMetalLB)
	return driverReach{
		chart: driverChart, provisioner: localv1alpha1.ProvisionerMetalLB,
		pin: map[string]any{
			placeholder.MetaAnnotations: map[string]any{ips: reachIP, localv1alpha1.AnnotationPinnedBy: reachIP, retry: "1",
				shared: reachKey, localv1alpha1.AnnotationSharedBy: reachKey},
			placeholder.MetaLabels:     map[string]any{localv1alpha1.LabelWithdrawn: nil},
			placeholder.MetaFinalizers: []string{carrier},
		},
		unpin: map[string]any{
			placeholder.MetaRemoveFinalizers: []string{carrier},
			placeholder.MetaAnnotations: map[string]any{ips: nil, localv1alpha1.AnnotationPinnedBy: nil, retry: nil,
				shared: nil, localv1alpha1.AnnotationSharedBy: nil},
			placeholder.MetaLabels: map[string]any{localv1alpha1.LabelWithdrawn: reachMark},
		},
		retry:             map[string]any{placeholder.MetaAnnotations: map[string]any{retry: "2"}},
		pinnedAnnotations: []string{ips, localv1alpha1.AnnotationPinnedBy, retry, shared, localv1alpha1.AnnotationSharedBy},
		foreignPins: []string{"metallb.io/address-pool", "metallb.universe.tf/loadBalancerIPs",
			"metallb.universe.tf/allow-shared-ip", "lbipam.cilium.io/ips"},
	}
}

func ciliumReach(placeholders string) driverReach {
	const ips, shared, crossNS = "lbipam.cilium.io/ips", "lbipam.cilium.io/sharing-key", "lbipam.cilium.io/sharing-cross-namespace"
	carrier := localv1alpha1.DriverCarrierFinalizer(localv1alpha1.ProvisionerCilium)
	return driverReach{
		chart: ciliumChart, provisioner: localv1alpha1.ProvisionerCilium,
		pin: map[string]any{
			placeholder.MetaAnnotations: map[string]any{ips: reachIP, localv1alpha1.AnnotationPinnedBy: reachIP,
				shared: reachKey, localv1alpha1.AnnotationSharedBy: reachKey, crossNS: placeholders},
			placeholder.MetaLabels:     map[string]any{localv1alpha1.LabelCiliumPool: reachClass, localv1alpha1.LabelWithdrawn: nil},
			placeholder.MetaFinalizers: []string{carrier},
		},
		unpin: map[string]any{
			placeholder.MetaRemoveFinalizers: []string{carrier},
			placeholder.MetaAnnotations: map[string]any{ips: nil, localv1alpha1.AnnotationPinnedBy: nil,
				shared: nil, crossNS: nil, localv1alpha1.AnnotationSharedBy: nil},
			placeholder.MetaLabels: map[string]any{localv1alpha1.LabelCiliumPool: nil, localv1alpha1.LabelWithdrawn: reachMark},
		},
		pinnedAnnotations: []string{ips, localv1alpha1.AnnotationPinnedBy, shared, localv1alpha1.AnnotationSharedBy, crossNS},
		pinnedLabels:      []string{localv1alpha1.LabelCiliumPool},
		foreignPins: []string{"io.cilium/lb-ipam-ips", "io.cilium/lb-ipam-sharing-key",
			"lbipam.cilium.io/some-later-request", "metallb.io/loadBalancerIPs"},
	}
}

// patchService applies a strategic merge patch to a Service (or its
// subresource) as who.
func patchService(t *testing.T, who *actor, namespace, name string, patch map[string]any, subresource ...string) error {
	t.Helper()
	body, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	_, err = who.cs.CoreV1().Services(namespace).Patch(t.Context(), name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, subresource...)
	return err
}

// metadataPatch wraps metadata into a patch of the object.
func metadataPatch(meta map[string]any) map[string]any {
	return map[string]any{"metadata": meta}
}

// grantServiceAndStatusWrites lets subject do anything to Services and their
// status in namespace, so that only admission stands in its way.
func grantServiceAndStatusWrites(t *testing.T, c *cluster.Cluster, namespace string, subject rbacv1.Subject) {
	t.Helper()
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	_, err := cs.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "service-writer", Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services", "services/status"},
			Verbs: []string{rbacv1.VerbAll}}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "service-writer", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "service-writer"},
		Subjects:   []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
}

// TestServiceWritePolicy installs each driver chart's serviceWritePolicy,
// on by default, for real, and writes as the driver's ServiceAccount: on a
// tenant's Service the driver may write its pin and withdraw it as its code
// does, and nothing else; it may create and delete Services only in its
// placeholder namespace, where the policy does not hold it.
func TestServiceWritePolicy(t *testing.T) {
	for _, tc := range []struct {
		short string
		reach func(placeholders string) driverReach
	}{
		{"metallb", func(string) driverReach { return metallbReach() }},
		{"cilium", ciliumReach},
	} {
		t.Run(tc.short, func(t *testing.T) {
			// A release namespace of its own: the policy binds the
			// ServiceAccount it names across the shared cluster.
			releaseNS := "reach-" + tc.short
			placeholders, tenant := releaseNS+"-holds", releaseNS+"-tenant"
			testServiceWritePolicy(t, tc.reach(placeholders), releaseNS, placeholders, tenant)
		})
	}
}

// denial is a write the policy refuses the driver, and the refusal.
type denial struct {
	what   string
	patch  map[string]any
	denial string
}

func testServiceWritePolicy(t *testing.T, r driverReach, releaseNS, placeholders, tenant string) {
	c := startCluster(t)
	ctx := t.Context()
	g := NewWithT(t)
	// The class-parameters policy is the subject of its own test.
	rendered := render(t, r.chart, r.chart, releaseNS, "--set", "placeholderNamespace="+placeholders,
		"--set", "classParametersPolicy.enabled=false")
	g.Expect(ofKind(rendered, "ValidatingAdmissionPolicy")).To(ConsistOf(
		HaveField("Object", HaveKeyWithValue("metadata", HaveKeyWithValue("name", r.chart+"-service-writes")))),
		"the policy is on by default")
	applyPolicy(t, rendered)
	for _, ns := range []string{placeholders, tenant} {
		createNamespace(t, ns, nil)
		grantServiceAndStatusWrites(t, c, ns, serviceAccountSubject(releaseNS, r.chart))
	}
	admin := newActor(t, "admin", c.Config)
	driver := serviceAccount(t, c, releaseNS, r.chart)
	carrier := localv1alpha1.DriverCarrierFinalizer(r.provisioner)
	name := "the " + r.chart + " driver"
	notInHolds := name + " creates and deletes Services only in its placeholder namespace " + placeholders + ", not in " + tenant
	notTheDrivers := func(what, key, verb string) string {
		return what + " " + key + " is not the " + r.chart + " driver's to " + verb
	}

	// A tenant's Service, with metadata of its own and of other controllers.
	const protect = "example.com/protect"
	tenantService := func(t *testing.T, name string, finalizers ...string) {
		t.Helper()
		s := loadBalancer(tenant, name)
		s.Labels = map[string]string{"app": "web"}
		s.Annotations = map[string]string{"example.com/owner": "team-a", localv1alpha1.AnnotationIPAddressClaim: "web"}
		s.Finalizers = finalizers
		_, err := admin.cs.CoreV1().Services(tenant).Create(ctx, s, metav1.CreateOptions{})
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		if len(finalizers) > 0 {
			// Not through patchService: t's context is canceled before its
			// cleanup runs.
			t.Cleanup(func() {
				_, err := admin.cs.CoreV1().Services(tenant).Patch(context.Background(), name, types.MergePatchType,
					[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				if client.IgnoreNotFound(err) != nil {
					t.Errorf("taking the finalizers off Service %s/%s: %v", tenant, name, err)
				}
			})
		}
	}

	// A new policy takes a moment to become effective.
	g.Eventually(func() error {
		_, err := driver.cs.CoreV1().Services(tenant).Create(ctx, loadBalancer(tenant, "probe"), dryRun)
		return err
	}, policyTimeout, policyPoll).Should(MatchError(ContainSubstring(notInHolds)))

	t.Run(name+" pins a tenant's Service and withdraws the pin", func(t *testing.T) {
		g := NewWithT(t)
		tenantService(t, "pinned", protect)
		g.Expect(patchService(t, driver, tenant, "pinned", metadataPatch(r.pin))).To(Succeed())
		s, err := admin.cs.CoreV1().Services(tenant).Get(ctx, "pinned", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, key := range r.pinnedAnnotations {
			g.Expect(s.Annotations).To(HaveKey(key))
		}
		for _, key := range r.pinnedLabels {
			g.Expect(s.Labels).To(HaveKey(key))
		}
		g.Expect(s.Finalizers).To(ConsistOf(protect, carrier))
		if r.retry != nil {
			g.Expect(patchService(t, driver, tenant, "pinned", metadataPatch(r.retry))).To(Succeed())
		}

		g.Expect(patchService(t, driver, tenant, "pinned", metadataPatch(r.unpin))).To(Succeed())
		s, err = admin.cs.CoreV1().Services(tenant).Get(ctx, "pinned", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Annotations).To(Equal(map[string]string{"example.com/owner": "team-a", localv1alpha1.AnnotationIPAddressClaim: "web"}))
		g.Expect(s.Labels).To(Equal(map[string]string{"app": "web", localv1alpha1.LabelWithdrawn: reachMark}))
		g.Expect(s.Finalizers).To(ConsistOf(protect))
	})

	t.Run(name+" takes its finalizer off a Service being deleted, and only its own", func(t *testing.T) {
		g := NewWithT(t)
		tenantService(t, "leaving", carrier, protect)
		g.Expect(admin.cs.CoreV1().Services(tenant).Delete(ctx, "leaving", metav1.DeleteOptions{})).To(Succeed())
		expectDenied(g, patchService(t, driver, tenant, "leaving", metadataPatch(map[string]any{
			placeholder.MetaRemoveFinalizers: []string{protect}})), notTheDrivers("finalizer", protect, "add or remove"))
		g.Expect(patchService(t, driver, tenant, "leaving", metadataPatch(map[string]any{
			placeholder.MetaRemoveFinalizers: []string{carrier}}))).To(Succeed())
	})

	denials := []denial{
		{"spec.loadBalancerIP", map[string]any{"spec": map[string]any{"loadBalancerIP": reachIP}}, "spec is not the " + r.chart + " driver's to change"},
		{"the selector", map[string]any{"spec": map[string]any{"selector": map[string]any{"app": "elsewhere"}}}, "spec is not the " + r.chart + " driver's to change"},
		{"an annotation of the tenant's", metadataPatch(map[string]any{placeholder.MetaAnnotations: map[string]any{
			"example.com/owner": "team-b"}}), notTheDrivers("annotation", "example.com/owner", "write")},
		{"the claim the Service names", metadataPatch(map[string]any{placeholder.MetaAnnotations: map[string]any{
			localv1alpha1.AnnotationIPAddressClaim: nil}}), notTheDrivers("annotation", localv1alpha1.AnnotationIPAddressClaim, "write")},
		{"a label of the tenant's", metadataPatch(map[string]any{placeholder.MetaLabels: map[string]any{
			"app": "elsewhere"}}), notTheDrivers("label", "app", "write")},
		{"a label of its own choosing", metadataPatch(map[string]any{placeholder.MetaLabels: map[string]any{
			"example.com/exposed": "true"}}), notTheDrivers("label", "example.com/exposed", "write")},
		{"another finalizer", metadataPatch(map[string]any{placeholder.MetaFinalizers: []string{"example.com/other"}}),
			notTheDrivers("finalizer", "example.com/other", "add or remove")},
		{"the tenant's finalizer away", metadataPatch(map[string]any{placeholder.MetaRemoveFinalizers: []string{protect}}),
			notTheDrivers("finalizer", protect, "add or remove")},
		{"an owner", metadataPatch(map[string]any{"ownerReferences": []any{map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "5d3c8c4e-0000-4000-8000-000000000001"}}}),
			"metadata.ownerReferences is not the " + r.chart + " driver's to change"},
	}
	pins := make([]denial, 0, len(r.foreignPins))
	for _, key := range r.foreignPins {
		pins = append(pins, denial{key, metadataPatch(map[string]any{placeholder.MetaAnnotations: map[string]any{key: reachIP}}),
			notTheDrivers("annotation", key, "write")})
	}
	for i, d := range append(denials, pins...) {
		t.Run(name+" may not write "+d.what+" on a tenant's Service", func(t *testing.T) {
			g := NewWithT(t)
			svc := svcName("deny", i)
			tenantService(t, svc, protect)
			expectDenied(g, patchService(t, driver, tenant, svc, d.patch), d.denial)
			g.Expect(patchService(t, admin, tenant, svc, d.patch)).To(Succeed(), "the policy holds the driver alone")
		})
	}

	t.Run(name+" may not write a tenant's Service status", func(t *testing.T) {
		g := NewWithT(t)
		tenantService(t, "status")
		status := map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": reachIP}}}}}
		expectDenied(g, patchService(t, driver, tenant, "status", status, "status"), name+" writes no Service status outside its placeholder namespace")
		g.Expect(patchService(t, admin, tenant, "status", status, "status")).To(Succeed(), "the policy holds the driver alone")
	})

	t.Run(name+" may not create or delete a tenant's Service", func(t *testing.T) {
		g := NewWithT(t)
		_, err := driver.cs.CoreV1().Services(tenant).Create(ctx, loadBalancer(tenant, "created"), metav1.CreateOptions{})
		expectDenied(g, err, notInHolds)
		tenantService(t, "kept")
		expectDenied(g, driver.cs.CoreV1().Services(tenant).Delete(ctx, "kept", metav1.DeleteOptions{}), notInHolds)
	})

	t.Run(name+" writes Services in its placeholder namespace as it needs", func(t *testing.T) {
		g := NewWithT(t)
		_, err := driver.cs.CoreV1().Services(placeholders).Create(ctx, loadBalancer(placeholders, "hold"), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(patchService(t, driver, placeholders, "hold", map[string]any{
			"metadata": map[string]any{placeholder.MetaLabels: map[string]any{localv1alpha1.LabelPlaceholder: localv1alpha1.PlaceholderHold}},
			"spec":     map[string]any{"loadBalancerIP": reachIP},
		})).To(Succeed())
		g.Expect(driver.cs.CoreV1().Services(placeholders).Delete(ctx, "hold", metav1.DeleteOptions{})).To(Succeed())
	})
}
