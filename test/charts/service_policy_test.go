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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// serviceField is one Service field the metallb-iad policy reserves.
type serviceField struct {
	// name is how a denial names the field.
	name  string
	set   func(s *corev1.Service, value string)
	unset func(s *corev1.Service)
	// denial is the message refusing a write to the field.
	denial string
}

// reservedServiceFields lists every field the policy reserves, in the order
// the policy lists them.
func reservedServiceFields() []serviceField {
	var fields []serviceField
	for _, key := range []string{
		"metallb.io/loadBalancerIPs",
		"metallb.io/address-pool",
		"metallb.io/allow-shared-ip",
		"metallb.universe.tf/loadBalancerIPs",
		"metallb.universe.tf/address-pool",
		"metallb.universe.tf/allow-shared-ip",
		localv1alpha1.AnnotationPinnedBy,
		localv1alpha1.AnnotationSharedBy,
		localv1alpha1.AnnotationRetry,
	} {
		fields = append(fields, annotationField(key, reservedMessage("metallb-iad", "annotation "+key)))
	}
	return append(fields,
		labelField(localv1alpha1.LabelWithdrawn, "label "+localv1alpha1.LabelWithdrawn+" is reserved to the metallb-iad driver, which labels the Services it withdrew a pin from"),
		loadBalancerIPField(reservedMessage("metallb-iad", "spec.loadBalancerIP")))
}

// annotationField is the reserved annotation key, denied with denial.
func annotationField(key, denial string) serviceField {
	return serviceField{name: "annotation " + key, denial: denial,
		set:   func(s *corev1.Service, v string) { metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, v) },
		unset: func(s *corev1.Service) { delete(s.Annotations, key) }}
}

// labelField is the reserved label key, denied with denial.
func labelField(key, denial string) serviceField {
	return serviceField{name: "label " + key, denial: denial,
		set:   func(s *corev1.Service, v string) { metav1.SetMetaDataLabel(&s.ObjectMeta, key, v) },
		unset: func(s *corev1.Service) { delete(s.Labels, key) }}
}

// loadBalancerIPField is spec.loadBalancerIP, denied with denial.
func loadBalancerIPField(denial string) serviceField {
	return serviceField{name: "spec.loadBalancerIP", denial: denial,
		set:   func(s *corev1.Service, v string) { s.Spec.LoadBalancerIP = v },
		unset: func(s *corev1.Service) { s.Spec.LoadBalancerIP = "" }}
}

// reservedMessage is driver's policy's denial of a write to field.
func reservedMessage(driver, field string) string {
	return field + " is reserved to the " + driver + " driver; reference an IPAddressClaim with " +
		localv1alpha1.AnnotationIPAddressClaim + " instead"
}

// Two values every reserved field accepts: annotations take any string.
const (
	firstIP  = "203.0.113.7"
	secondIP = "203.0.113.8"
)

// loadBalancer builds a selectorless LoadBalancer Service.
func loadBalancer(namespace, name string, fields ...serviceField) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.ServiceSpec{
			Type:                          corev1.ServiceTypeLoadBalancer,
			AllocateLoadBalancerNodePorts: new(false),
			Ports:                         []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, f := range fields {
		f.set(s, firstIP)
	}
	return s
}

// updateService reads a Service, changes it and writes the whole object back
// as who.
func updateService(t *testing.T, who *actor, namespace, name string, change func(*corev1.Service)) error {
	t.Helper()
	s, err := who.cs.CoreV1().Services(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s reading Service %s/%s: %v", who.name, namespace, name, err)
	}
	change(s)
	_, err = who.cs.CoreV1().Services(namespace).Update(t.Context(), s, metav1.UpdateOptions{})
	return err
}

// TestServiceFieldsPolicy installs the metallb-iad chart's admission policy
// for real and checks, with real users, who may write the Service fields it
// reserves.
func TestServiceFieldsPolicy(t *testing.T) {
	ctx := t.Context()
	bed := newPolicyBed(t, driverChart, "metallb-iad-system", "svc", reservedServiceFields())
	enforced, fields := bed.enforced, bed.fields
	tenant := bed.tenant

	bed.admitsUnreservedFields(ctx, t, func(*corev1.Service) {})

	bed.deniesEachField(ctx, t)

	t.Run("a denial names every reserved annotation the write touches", func(t *testing.T) {
		g := NewWithT(t)
		_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "two", fields[0], fields[1]), metav1.CreateOptions{})
		expectDenied(g, err, "annotations metallb.io/loadBalancerIPs, metallb.io/address-pool are reserved to the metallb-iad driver")
	})

	bed.admitsUpdateLeavingFields(ctx, t, func(g Gomega, s *corev1.Service) {
		g.Expect(s.Annotations).To(HaveKeyWithValue("metallb.io/loadBalancerIPs", firstIP))
		g.Expect(s.Annotations).To(HaveKeyWithValue(localv1alpha1.AnnotationPinnedBy, firstIP))
		g.Expect(s.Annotations).To(HaveKeyWithValue(localv1alpha1.AnnotationSharedBy, firstIP))
		g.Expect(s.Spec.LoadBalancerIP).To(Equal(firstIP))
		g.Expect(s.Labels).To(HaveKeyWithValue(localv1alpha1.LabelWithdrawn, firstIP))
	})

	bed.allowlistedMayWriteEveryField(ctx, t)
	bed.admitsOutsideTheSelector(ctx, t)
}

// policyBed is a driver chart's Service policy installed twice on the test
// cluster: one release enforcing in the namespace labelled enforce, one
// only reporting ([Warn, Audit]) in the namespace labelled report, and a
// namespace neither selects; with the actors the tests write as. The tenant
// holds the built-in edit role in each namespace, as tenants do: it may
// write any field and any metadata of a Service.
type policyBed struct {
	enforced, unselected, reported       string
	admin, tenant, ipAdmin, kubeadmAdmin *actor
	driver                               *actor
	fields                               []serviceField
}

// newPolicyBed installs chart's policy from its release namespace. prefix
// keeps the bed's namespaces and users apart from another test's; writers
// are granted Service writes besides the tenants, the allowlisted users and
// the chart's driver.
func newPolicyBed(t *testing.T, chart, releaseNS, prefix string, fields []serviceField, writers ...rbacv1.Subject) *policyBed {
	c := startCluster(t)
	ctx := t.Context()
	selectorKey := "test.local.sdn.cozystack.io/" + prefix + "-policy"
	// The driver's own policy (serviceWritePolicy) would hold the driver to
	// its pins; here it writes as a principal the reserved fields are left to.
	applyPolicy(t, render(t, chart, chart, releaseNS,
		"--set", "serviceWritePolicy.enabled=false",
		"--set", "classParametersPolicy.enabled=false",
		"--set", "admissionPolicy.enabled=true",
		"--set", "admissionPolicy.allowedUsernames={ip-admin}",
		"--set-json", `admissionPolicy.namespaceSelector={"matchLabels":{"`+selectorKey+`":"enforce"}}`,
	))
	applyPolicy(t, render(t, chart, chart, releaseNS,
		"--set", "fullnameOverride="+chart+"-report",
		"--set", "serviceWritePolicy.enabled=false",
		"--set", "classParametersPolicy.enabled=false",
		"--set", "admissionPolicy.enabled=true",
		"--set-json", `admissionPolicy.validationActions=["Warn","Audit"]`,
		"--set-json", `admissionPolicy.namespaceSelector={"matchLabels":{"`+selectorKey+`":"report"}}`,
	))
	b := &policyBed{enforced: prefix + "-enforced", unselected: prefix + "-unselected", reported: prefix + "-reported", fields: fields}
	createNamespace(t, b.enforced, map[string]string{selectorKey: "enforce"})
	createNamespace(t, b.unselected, nil)
	createNamespace(t, b.reported, map[string]string{selectorKey: "report"})
	writers = append(writers, userSubject("ip-admin"), groupSubject("kubeadm:cluster-admins"),
		serviceAccountSubject(releaseNS, chart))
	for _, ns := range []string{b.enforced, b.unselected, b.reported} {
		grantWriters(t, c, ns, writers...)
		grantEdit(t, c, ns, groupSubject("tenants"))
	}
	b.admin = newActor(t, "admin", c.Config) // system:masters, allowlisted by default
	b.tenant = newUser(t, c, prefix+"-tenant", "tenants")
	b.ipAdmin = newUser(t, c, "ip-admin")                                             // allowlisted by name
	b.kubeadmAdmin = newUser(t, c, prefix+"-kubeadm-admin", "kubeadm:cluster-admins") // allowlisted by default group
	b.driver = serviceAccount(t, c, releaseNS, chart)

	// A new policy takes a moment to become effective.
	pin := fields[0]
	g := NewWithT(t)
	g.Eventually(func() error {
		_, err := b.tenant.cs.CoreV1().Services(b.enforced).Create(ctx, loadBalancer(b.enforced, "probe", pin), dryRun)
		return err
	}, policyTimeout, policyPoll).Should(MatchError(ContainSubstring(pin.denial)))
	g.Eventually(func() []string {
		_, err := b.tenant.cs.CoreV1().Services(b.reported).Create(ctx, loadBalancer(b.reported, "probe", pin), dryRun)
		g.Expect(err).NotTo(HaveOccurred())
		return b.tenant.warnings.take()
	}, policyTimeout, policyPoll).ShouldNot(BeEmpty())
	return b
}

// allowlistedMayWriteEveryField checks that each allowlisted principal and
// the driver may set, change and remove every reserved field.
func (b *policyBed) allowlistedMayWriteEveryField(ctx context.Context, t *testing.T) {
	enforced, fields := b.enforced, b.fields
	for _, who := range []*actor{b.ipAdmin, b.kubeadmAdmin, b.driver, b.admin} {
		t.Run(who.name+" may set, change and remove every reserved field", func(t *testing.T) {
			g := NewWithT(t)
			name := "by-" + strings.ReplaceAll(who.name, ":", "-")
			_, err := who.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, name, fields...), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(updateService(t, who, enforced, name, func(s *corev1.Service) {
				for _, f := range fields {
					f.set(s, secondIP)
				}
			})).To(Succeed())
			g.Expect(updateService(t, who, enforced, name, func(s *corev1.Service) {
				for _, f := range fields {
					f.unset(s)
				}
			})).To(Succeed())
		})
	}

}

// admitsUnreservedFields checks that a tenant may create a Service with no
// reserved field and update it to reference a claim; unreserved writes
// the other fields the update sets, which the policy must leave alone too.
func (b *policyBed) admitsUnreservedFields(ctx context.Context, t *testing.T, unreserved func(s *corev1.Service)) {
	tenant, enforced := b.tenant, b.enforced
	t.Run("a tenant may create and update Services without reserved fields", func(t *testing.T) {
		g := NewWithT(t)
		_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "plain"), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(updateService(t, tenant, enforced, "plain", func(s *corev1.Service) {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, localv1alpha1.AnnotationIPAddressClaim, "web")
			unreserved(s)
		})).To(Succeed())
	})
}

// admitsUpdateLeavingFields checks that a tenant may update a Service an
// admin pinned with every reserved field, as long as the update leaves
// those fields as they are; kept checks that they are.
func (b *policyBed) admitsUpdateLeavingFields(ctx context.Context, t *testing.T, kept func(g Gomega, s *corev1.Service)) {
	tenant, admin, enforced, fields := b.tenant, b.admin, b.enforced, b.fields
	t.Run("a tenant update leaving the reserved fields unchanged is admitted", func(t *testing.T) {
		g := NewWithT(t)
		_, err := admin.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "pinned", fields...), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred(), "an admin (system:masters) may pin a Service")
		g.Expect(updateService(t, tenant, enforced, "pinned", func(s *corev1.Service) {
			metav1.SetMetaDataLabel(&s.ObjectMeta, "app", "web")
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, "example.com/owner", "team-a")
		})).To(Succeed())
		s, err := tenant.cs.CoreV1().Services(enforced).Get(ctx, "pinned", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Labels).To(HaveKeyWithValue("app", "web"))
		kept(g, s)
	})
}

// admitsOutsideTheSelector checks that neither release binds a namespace
// its selector does not match.
func (b *policyBed) admitsOutsideTheSelector(ctx context.Context, t *testing.T) {
	tenant, unselected, fields := b.tenant, b.unselected, b.fields
	t.Run("a tenant outside the namespaceSelector is admitted", func(t *testing.T) {
		g := NewWithT(t)
		_, err := tenant.cs.CoreV1().Services(unselected).Create(ctx, loadBalancer(unselected, "outside", fields...), metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(updateService(t, tenant, unselected, "outside", func(s *corev1.Service) {
			for _, f := range fields {
				f.set(s, secondIP)
			}
		})).To(Succeed())
		g.Expect(tenant.warnings.take()).To(BeEmpty(), "the reporting release is not bound there either")
	})
}

// deniesEachField checks, for each reserved field, that the policy denies a
// tenant creating a Service with it, adding it, and changing or removing the
// value an admin set, in the enforced namespace, and that it only warns in
// the reported one ([Warn, Audit]).
func (b *policyBed) deniesEachField(ctx context.Context, t *testing.T) {
	tenant, admin, enforced, reported := b.tenant, b.admin, b.enforced, b.reported
	for i, f := range b.fields {
		t.Run("a tenant creating a Service with "+f.name+" is denied", func(t *testing.T) {
			g := NewWithT(t)
			_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, "create", f), metav1.CreateOptions{})
			expectDenied(g, err, f.denial)
		})

		t.Run("a tenant adding "+f.name+" is denied", func(t *testing.T) {
			g := NewWithT(t)
			name := svcName("add", i)
			_, err := tenant.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, name), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			expectDenied(g, updateService(t, tenant, enforced, name, func(s *corev1.Service) { f.set(s, firstIP) }), f.denial)
		})

		t.Run("a tenant changing or removing "+f.name+" an admin set is denied", func(t *testing.T) {
			g := NewWithT(t)
			name := svcName("change", i)
			_, err := admin.cs.CoreV1().Services(enforced).Create(ctx, loadBalancer(enforced, name, f), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			expectDenied(g, updateService(t, tenant, enforced, name, func(s *corev1.Service) { f.set(s, secondIP) }), f.denial)
			expectDenied(g, updateService(t, tenant, enforced, name, f.unset), f.denial)
		})

		t.Run("[Warn, Audit] admits a tenant writing "+f.name+" with a warning naming it", func(t *testing.T) {
			g := NewWithT(t)
			tenant.warnings.take()
			_, err := tenant.cs.CoreV1().Services(reported).Create(ctx, loadBalancer(reported, svcName("report", i), f), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			expectWarned(g, tenant.warnings.take(), f.denial)
		})
	}
}

func svcName(prefix string, i int) string {
	return prefix + "-" + string(rune('a'+i))
}
