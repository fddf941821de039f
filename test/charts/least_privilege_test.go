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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// access is one request a manager's identity may or may not make.
type access struct {
	verb, group, resource, namespace string
	allowed                          bool
}

func (a access) String() string {
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	return fmt.Sprintf("%s %s.%s %s", a.verb, a.resource, a.group, where)
}

// servicesOfDriver is what a driver running in driverNS, whose
// placeholders live in holds, may do with Services: create and delete them
// only in holds, read every one and patch a tenant's metadata
// (association), and never write their status, which the load balancer
// (MetalLB, LB-IPAM) writes.
func servicesOfDriver(holds, driverNS, tenant string) []access {
	return []access{
		{"create", "", "services", holds, true},
		{"delete", "", "services", holds, true},
		{"create", "", "services", tenant, false},
		{"delete", "", "services", tenant, false},
		{"create", "", "services", driverNS, false},
		{"update", "", "services", tenant, false},
		{"get", "", "services", tenant, true},
		{"list", "", "services", "", true},
		{"watch", "", "services", "", true},
		{"patch", "", "services", tenant, true},
		{"patch", "", "services/status", tenant, false},
		{"update", "", "services/status", holds, false},
	}
}

// TestManagersHoldOnlyWhatTheyUse installs each chart's RBAC for real, with
// the placeholder and MetalLB namespaces moved away from their defaults, and
// asks the API server's authorizer, as each chart's ServiceAccount, what it
// may do. (The end-to-end suite runs the core and the MetalLB driver under
// these identities, which proves their roles sufficient; this proves every
// role no wider.)
func TestManagersHoldOnlyWhatTheyUse(t *testing.T) {
	c := startCluster(t)
	g := NewWithT(t)

	const (
		coreNS, driverNS = "lp-core", "lp-driver"
		placeholders     = "lp-placeholders"
		metallbNS        = "lp-metallb"
		ciliumNS         = "lp-cilium"
		ciliumHolds      = "lp-cilium-placeholders"
		tenant           = "lp-tenant"
	)
	for _, ns := range []string{coreNS, driverNS, metallbNS, ciliumNS, tenant} {
		createNamespace(t, ns, nil)
	}
	install := func(chart, ns string, args ...string) {
		for _, obj := range render(t, chart, chart, ns, args...) {
			switch obj.GetKind() {
			case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				// Other tests dry-run the same cluster-wide names: they
				// go when the test ends.
				kit.Make(t, g, obj)
			}
		}
	}
	install(coreChart, coreNS)
	install(driverChart, driverNS, "--set", "placeholderNamespace="+placeholders, "--set", "metallbNamespace="+metallbNS)
	install(ciliumChart, ciliumNS, "--set", "placeholderNamespace="+ciliumHolds)

	check := func(who *actor, want []access) {
		for _, a := range want {
			g.Eventually(func() (bool, error) {
				r, err := who.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), &authorizationv1.SelfSubjectAccessReview{
					Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: a.resource,
					}},
				}, metav1.CreateOptions{})
				if err != nil {
					return false, err
				}
				return r.Status.Allowed, nil
			}, 10*time.Second, 100*time.Millisecond).Should(Equal(a.allowed), "%s: %s", who.name, a)
		}
	}

	const local, metallb, ciliumGroup = "local.sdn.cozystack.io", "metallb.io", "cilium.io"
	t.Run("the driver creates and deletes Services only in the placeholder namespace", func(t *testing.T) {
		driver := serviceAccount(t, c, driverNS, "metallb-iad")
		check(driver, append(servicesOfDriver(placeholders, driverNS, tenant),
			// Phantoms: read MetalLB's refusals, write no event of core/v1.
			access{"list", "", "events", "", true},
			access{"watch", "", "events", "", true},
			access{"create", "", "events", tenant, false},
			access{"delete", "", "events", tenant, false},
		))
	})

	t.Run("the driver writes MetalLB objects only in the MetalLB namespace", func(t *testing.T) {
		driver := serviceAccount(t, c, driverNS, "metallb-iad")
		for _, res := range []string{"ipaddresspools", "l2advertisements", "bgpadvertisements"} {
			// A class's pool goes with the class (owner reference); the
			// driver deletes only the advertisement of the kind a class
			// switched away from.
			deletes := res != "ipaddresspools"
			check(driver, []access{
				{"create", metallb, res, metallbNS, true},
				{"patch", metallb, res, metallbNS, true},
				{"delete", metallb, res, metallbNS, deletes},
				{"update", metallb, res, metallbNS, false},
				{"list", metallb, res, metallbNS, true},
				{"watch", metallb, res, metallbNS, true},
				{"create", metallb, res, tenant, false},
				{"delete", metallb, res, placeholders, false},
				{"list", metallb, res, "", false},
			})
		}
	})

	t.Run("the Cilium driver creates and deletes Services only in its placeholder namespace", func(t *testing.T) {
		driver := serviceAccount(t, c, ciliumNS, "cilium-iad")
		check(driver, append(servicesOfDriver(ciliumHolds, ciliumNS, tenant),
			// Nor in the MetalLB driver's.
			access{"create", "", "services", placeholders, false},
			// Its secret is the placeholder namespace's UID.
			access{"get", "", "namespaces", "", true},
			access{"list", "", "namespaces", "", false},
			// It reads no core/v1 event: LB-IPAM reports on Service conditions.
			access{"list", "", "events", "", false},
		))
	})

	t.Run("the Cilium driver writes its cluster-scoped pools, deletes none, and writes nothing of MetalLB", func(t *testing.T) {
		driver := serviceAccount(t, c, ciliumNS, "cilium-iad")
		check(driver, []access{
			{"create", ciliumGroup, "ciliumloadbalancerippools", "", true},
			{"patch", ciliumGroup, "ciliumloadbalancerippools", "", true},
			// A class's pool goes with the class (owner reference).
			{"delete", ciliumGroup, "ciliumloadbalancerippools", "", false},
			{"list", ciliumGroup, "ciliumloadbalancerippools", "", true},
			{"watch", ciliumGroup, "ciliumloadbalancerippools", "", true},
			{"update", ciliumGroup, "ciliumloadbalancerippools", "", false},
			{"list", ciliumGroup, "ciliuml2announcementpolicies", "", false},
			{"create", metallb, "ipaddresspools", metallbNS, false},
			{"list", metallb, "ipaddresspools", "", false},
		})
	})

	t.Run("the MetalLB driver writes no Cilium pool", func(t *testing.T) {
		driver := serviceAccount(t, c, driverNS, "metallb-iad")
		check(driver, []access{
			{"create", ciliumGroup, "ciliumloadbalancerippools", "", false},
			{"list", ciliumGroup, "ciliumloadbalancerippools", "", false},
		})
	})

	t.Run("the core holds no verb it never uses", func(t *testing.T) {
		core := serviceAccount(t, c, coreNS, "address-controller")
		check(core, []access{
			{"update", local, "ipaddresses", "", true},
			{"delete", local, "ipaddresses", "", true},
			{"update", local, "ipaddresses/status", "", true},
			{"update", local, "ipaddressclaims", tenant, true},
			{"update", local, "ipaddressclaims/status", tenant, true},
			{"update", local, "ipaddressclasses", "", true},
			{"update", local, "ipaddressclasses/status", "", true},
			{"create", local, "ipaddresses", "", false},
			{"patch", local, "ipaddresses", "", false},
			{"patch", local, "ipaddresses/status", "", false},
			{"patch", local, "ipaddressclaims", tenant, false},
			{"patch", local, "ipaddressclaims/status", tenant, false},
			{"patch", local, "ipaddressclasses", "", false},
			{"update", local, "ipaddressclaims/finalizers", tenant, false},
			{"get", "", "services", tenant, false},
		})
	})
}
