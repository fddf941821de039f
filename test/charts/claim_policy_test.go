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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

var claimGVR = localv1alpha1.GroupVersion.WithResource("ipaddressclaims")

// addressNameMessage is what the address-controller policy says when it
// denies a write to spec.addressName.
const addressNameMessage = "spec.addressName is reserved to cluster administrators"

// Names of IPAddresses a claim may pre-bind to.
const (
	firstAddress  = "ip-203-0-113-7"
	secondAddress = "ip-203-0-113-8"
)

// ipAddressClaim builds a claim, pre-bound to addressName unless it is empty.
func ipAddressClaim(namespace, name, addressName string) *unstructured.Unstructured {
	spec := map[string]any{"className": "public"}
	if addressName != "" {
		spec["addressName"] = addressName
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": localv1alpha1.GroupVersion.String(),
		"kind":       "IPAddressClaim",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       spec,
	}}
}

func createClaim(t *testing.T, who *actor, obj *unstructured.Unstructured, opts metav1.CreateOptions) error {
	t.Helper()
	_, err := who.dyn.Resource(claimGVR).Namespace(obj.GetNamespace()).Create(t.Context(), obj, opts)
	return err
}

// updateClaim reads a claim, changes it and writes the whole object back as
// who.
func updateClaim(t *testing.T, who *actor, namespace, name string, change func(*unstructured.Unstructured)) error {
	t.Helper()
	claims := who.dyn.Resource(claimGVR).Namespace(namespace)
	obj, err := claims.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s reading IPAddressClaim %s/%s: %v", who.name, namespace, name, err)
	}
	change(obj)
	_, err = claims.Update(t.Context(), obj, metav1.UpdateOptions{})
	return err
}

func setAddressName(name string) func(*unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		if name == "" {
			unstructured.RemoveNestedField(obj.Object, "spec", "addressName")
			return
		}
		_ = unstructured.SetNestedField(obj.Object, name, "spec", "addressName")
	}
}

// TestAddressNamePolicy installs the address-controller chart's admission
// policy for real and checks, with real users, who may set or change
// IPAddressClaim.spec.addressName.
func TestAddressNamePolicy(t *testing.T) {
	c := startCluster(t)

	const releaseNS = "address-controller-system"
	const selectorKey = "test.local.sdn.cozystack.io/address-name-policy"
	applyPolicy(t, render(t, coreChart, coreChart, releaseNS,
		"--set", "addressNamePolicy.enabled=true",
		"--set", "addressNamePolicy.allowedUsernames={ip-admin}",
		"--set-json", `addressNamePolicy.namespaceSelector={"matchLabels":{"`+selectorKey+`":"enforce"}}`,
	))
	applyPolicy(t, render(t, coreChart, coreChart, releaseNS,
		"--set", "fullnameOverride=address-controller-report",
		"--set", "addressNamePolicy.enabled=true",
		"--set-json", `addressNamePolicy.validationActions=["Warn","Audit"]`,
		"--set-json", `addressNamePolicy.namespaceSelector={"matchLabels":{"`+selectorKey+`":"report"}}`,
	))

	const enforced, unselected, reported = "claims-enforced", "claims-unselected", "claims-reported"
	createNamespace(t, enforced, map[string]string{selectorKey: "enforce"})
	createNamespace(t, unselected, nil)
	createNamespace(t, reported, map[string]string{selectorKey: "report"})
	for _, ns := range []string{enforced, unselected, reported} {
		grantWriters(t, c, ns, groupSubject("tenants"), userSubject("ip-admin"), groupSubject("kubeadm:cluster-admins"))
	}

	admin := newActor(t, "admin", c.Config) // system:masters, allowlisted by default
	tenant := newUser(t, c, "tenant", "tenants")
	ipAdmin := newUser(t, c, "ip-admin")                                     // allowlisted by name
	kubeadmAdmin := newUser(t, c, "kubeadm-admin", "kubeadm:cluster-admins") // allowlisted by default group

	// A new policy takes a moment to become effective.
	g := NewWithT(t)
	g.Eventually(func() error {
		return createClaim(t, tenant, ipAddressClaim(enforced, "probe", firstAddress), dryRun)
	}, policyTimeout, policyPoll).Should(MatchError(ContainSubstring(addressNameMessage)))
	g.Eventually(func() []string {
		g.Expect(createClaim(t, tenant, ipAddressClaim(reported, "probe", firstAddress), dryRun)).To(Succeed())
		return tenant.warnings.take()
	}, policyTimeout, policyPoll).ShouldNot(BeEmpty())

	t.Run("a tenant may create and update a claim without spec.addressName", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(createClaim(t, tenant, ipAddressClaim(enforced, "plain", ""), metav1.CreateOptions{})).To(Succeed())
		g.Expect(updateClaim(t, tenant, enforced, "plain", func(obj *unstructured.Unstructured) {
			obj.SetLabels(map[string]string{"app": "web"})
		})).To(Succeed())
	})

	t.Run("a tenant creating a claim with spec.addressName is denied", func(t *testing.T) {
		expectDenied(NewWithT(t), createClaim(t, tenant, ipAddressClaim(enforced, "create", firstAddress), metav1.CreateOptions{}),
			addressNameMessage)
	})

	t.Run("a tenant setting spec.addressName on update is denied", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(createClaim(t, tenant, ipAddressClaim(enforced, "set", ""), metav1.CreateOptions{})).To(Succeed())
		expectDenied(g, updateClaim(t, tenant, enforced, "set", setAddressName(firstAddress)), addressNameMessage)
	})

	t.Run("a tenant changing or removing spec.addressName an admin set is denied", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(createClaim(t, admin, ipAddressClaim(enforced, "change", firstAddress), metav1.CreateOptions{})).To(Succeed())
		expectDenied(g, updateClaim(t, tenant, enforced, "change", setAddressName(secondAddress)), addressNameMessage)
		expectDenied(g, updateClaim(t, tenant, enforced, "change", setAddressName("")), addressNameMessage)
	})

	t.Run("a tenant update leaving spec.addressName unchanged is admitted", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(createClaim(t, admin, ipAddressClaim(enforced, "adopted", firstAddress), metav1.CreateOptions{})).To(Succeed(),
			"an admin (system:masters) may pre-bind a claim")
		g.Expect(updateClaim(t, tenant, enforced, "adopted", func(obj *unstructured.Unstructured) {
			obj.SetLabels(map[string]string{"app": "web"})
			obj.SetAnnotations(map[string]string{"example.com/owner": "team-a"})
		})).To(Succeed())
		obj, err := tenant.dyn.Resource(claimGVR).Namespace(enforced).Get(t.Context(), "adopted", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app", "web"))
		addressName, _, _ := unstructured.NestedString(obj.Object, "spec", "addressName")
		g.Expect(addressName).To(Equal(firstAddress))
	})

	for _, who := range []*actor{ipAdmin, kubeadmAdmin, admin} {
		t.Run(who.name+" may set, change and remove spec.addressName", func(t *testing.T) {
			g := NewWithT(t)
			name := "by-" + who.name
			g.Expect(createClaim(t, who, ipAddressClaim(enforced, name, firstAddress), metav1.CreateOptions{})).To(Succeed())
			g.Expect(updateClaim(t, who, enforced, name, setAddressName(secondAddress))).To(Succeed())
			g.Expect(updateClaim(t, who, enforced, name, setAddressName(""))).To(Succeed())
		})
	}

	t.Run("a tenant outside the namespaceSelector is admitted", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(createClaim(t, tenant, ipAddressClaim(unselected, "outside", firstAddress), metav1.CreateOptions{})).To(Succeed())
		g.Expect(updateClaim(t, tenant, unselected, "outside", setAddressName(secondAddress))).To(Succeed())
		g.Expect(tenant.warnings.take()).To(BeEmpty(), "the reporting release is not bound there either")
	})

	t.Run("[Warn, Audit] admits a tenant setting and changing spec.addressName with a warning naming it", func(t *testing.T) {
		g := NewWithT(t)
		tenant.warnings.take()
		g.Expect(createClaim(t, tenant, ipAddressClaim(reported, "reported", firstAddress), metav1.CreateOptions{})).To(Succeed())
		expectWarned(g, tenant.warnings.take(), addressNameMessage)
		g.Expect(updateClaim(t, tenant, reported, "reported", setAddressName(secondAddress))).To(Succeed())
		expectWarned(g, tenant.warnings.take(), addressNameMessage)
	})
}
