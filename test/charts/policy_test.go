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
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/address-controller/test/cluster"
)

// Shared by the tests of both admission policies.

// How long a new policy or binding may take to become effective, and how
// often to probe it.
const (
	policyTimeout = 60 * time.Second
	policyPoll    = 250 * time.Millisecond
)

// actor is one principal writing to the cluster, with the warnings the API
// server sent it.
type actor struct {
	name     string
	cs       kubernetes.Interface
	dyn      dynamic.Interface
	warnings *warningRecorder
}

func newActor(t *testing.T, name string, cfg *rest.Config) *actor {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	w := &warningRecorder{}
	cfg.WarningHandlerWithContext = w
	return &actor{
		name:     name,
		cs:       kubernetes.NewForConfigOrDie(cfg),
		dyn:      dynamic.NewForConfigOrDie(cfg),
		warnings: w,
	}
}

// newUser adds a user of groups to the cluster and returns it as an actor.
func newUser(t *testing.T, c *cluster.Cluster, name string, groups ...string) *actor {
	t.Helper()
	cfg, err := c.AddUser(name, groups...)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	return newActor(t, name, cfg)
}

// serviceAccount returns an actor that impersonates ServiceAccount
// namespace/name, from the admin's config.
func serviceAccount(t *testing.T, c *cluster.Cluster, namespace, name string) *actor {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + namespace + ":" + name}
	return newActor(t, cfg.Impersonate.UserName, cfg)
}

// warningRecorder keeps the warnings the API server returns.
type warningRecorder struct {
	mu       sync.Mutex
	messages []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, message string) {
	if code != 299 || message == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, message)
}

// take returns the warnings recorded since the last call.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.messages
	w.messages = nil
	return out
}

// createNamespace creates a namespace with labels, removed when t ends.
func createNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	kit.Make(t, NewWithT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
}

// grantWriters lets subjects manage Services and IPAddressClaims in namespace.
func grantWriters(t *testing.T, c *cluster.Cluster, namespace string, subjects ...rbacv1.Subject) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{rbacv1.VerbAll}},
			{APIGroups: []string{"local.sdn.cozystack.io"}, Resources: []string{"ipaddressclaims"}, Verbs: []string{rbacv1.VerbAll}},
		},
	}
	_, err := cs.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "writer"},
		Subjects:   subjects,
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
}

// grantEdit binds subjects to the built-in edit ClusterRole in namespace,
// the role tenants hold: it writes every field and all metadata of a
// Service.
func grantEdit(t *testing.T, c *cluster.Cluster, namespace string, subjects ...rbacv1.Subject) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	_, err := cs.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "edit", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   subjects,
	}, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
}

func groupSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}
}

func serviceAccountSubject(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

// applyPolicy creates, for real, the ValidatingAdmissionPolicy and binding
// among rendered objects, removed when the test ends: they bind across the
// shared cluster. (Type-checking a policy into its status is the job of
// kube-controller-manager's validatingadmissionpolicy-status-controller,
// which the local control plane does not run; the tests observe behaviour.)
func applyPolicy(t *testing.T, rendered []*unstructured.Unstructured) {
	t.Helper()
	g := NewWithT(t)
	policies := ofKind(rendered, "ValidatingAdmissionPolicy")
	bindings := ofKind(rendered, "ValidatingAdmissionPolicyBinding")
	g.Expect(policies).To(HaveLen(1), "the chart renders one admission policy")
	g.Expect(bindings).To(HaveLen(1), "the chart renders one binding")
	kit.Make(t, g, policies[0], bindings[0])
}

// expectDenied asserts that err is the admission policy's denial with message.
func expectDenied(g Gomega, err error, message string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the write is denied")
	g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "the denial is Forbidden: %v", err)
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy"))
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(message))
}

// expectWarned asserts that warnings report message, and nothing else.
func expectWarned(g Gomega, warnings []string, message string) {
	g.ExpectWithOffset(1, warnings).To(ConsistOf(And(
		ContainSubstring("ValidatingAdmissionPolicy"),
		ContainSubstring(message),
	)), "the policy reports the write")
}

// dryRun is the create option of a probe that leaves nothing behind.
var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
