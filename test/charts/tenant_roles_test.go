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
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// TestTenantRolesAggregateIntoTheDefaultRoles installs the core chart's
// tenant ClusterRoles and checks that a namespace editor may claim addresses
// and a viewer may only read claims (and the usage ledgers counting them).
func TestTenantRolesAggregateIntoTheDefaultRoles(t *testing.T) {
	g := NewWithT(t)
	c := startCluster(t)
	ctx := t.Context()
	objs := render(t, coreChart, "tenant-roles", "address-controller-system")
	for _, role := range ofKind(objs, "ClusterRole") {
		if role.GetLabels()[rbacv1.GroupName+"/aggregate-to-view"] == "" && role.GetLabels()[rbacv1.GroupName+"/aggregate-to-edit"] == "" {
			continue
		}
		kit.Make(t, g, role)
	}
	for _, binding := range ofKind(objs, "ClusterRoleBinding") {
		if binding.GetName() == "address-controller-classes-view" {
			kit.Make(t, g, binding)
		}
	}

	ns := "tenant-roles"
	createNamespace(t, ns, nil)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	for user, role := range map[string]string{"editor": "edit", "viewer": "view"} {
		_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{userSubject(user)},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	editor, viewer := newUser(t, c, "editor"), newUser(t, c, "viewer")

	// kube-controller-manager aggregates the rules into edit and view.
	g.Eventually(func() error {
		return createClaim(t, editor, ipAddressClaim(ns, "web", ""), metav1.CreateOptions{})
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func() error {
		_, err := viewer.dyn.Resource(claimGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		return err
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	err := createClaim(t, viewer, ipAddressClaim(ns, "other", ""), metav1.CreateOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a viewer cannot claim: %v", err)
	_, err = editor.dyn.Resource(claimGVR.GroupVersion().WithResource("ipaddresses")).Get(ctx, "any", metav1.GetOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "addresses stay cluster-admin business: %v", err)

	usages := claimGVR.GroupVersion().WithResource("ipaddressclassusages")
	_, err = viewer.dyn.Resource(usages).Namespace(ns).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "tenants read what counts against their class limits")
	ledger := &unstructured.Unstructured{}
	ledger.SetAPIVersion(claimGVR.GroupVersion().String())
	ledger.SetKind("IPAddressClassUsage")
	ledger.SetNamespace(ns)
	ledger.SetName("public")
	_, err = editor.dyn.Resource(usages).Namespace(ns).Create(ctx, ledger, metav1.CreateOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "only the core writes usage ledgers: %v", err)
	// Every tenant sees which classes exist and which is the default, and
	// changes none of them.
	classes := claimGVR.GroupVersion().WithResource("ipaddressclasses")
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": classes.GroupVersion().String(), "kind": "IPAddressClass",
		"metadata": map[string]any{"name": "tenant-roles-public", "annotations": map[string]any{
			"ipaddressclass.local.sdn.cozystack.io/is-default-class": "true"}},
		"spec": map[string]any{"provisioner": "example.drivers.local.sdn.cozystack.io"},
	}}
	kit.Make(t, g, class.DeepCopy())
	for _, who := range []*actor{viewer, editor, newUser(t, c, "anyone")} {
		g.Eventually(func(g Gomega) {
			list, err := who.dyn.Resource(classes).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(list.Items).To(ContainElement(HaveField("Object", HaveKeyWithValue("metadata",
				HaveKeyWithValue("annotations", HaveKeyWithValue("ipaddressclass.local.sdn.cozystack.io/is-default-class", "true"))))))
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
		_, err = who.dyn.Resource(classes).Create(ctx, class, metav1.CreateOptions{})
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "classes stay cluster-admin business: %v", err)
	}
}
