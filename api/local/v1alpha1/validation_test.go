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

package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

var (
	k8s client.Client
	kit *testkit.Kit
	// cfg reaches the API server, for requests the client does not make.
	cfg *rest.Config
)

const ns = "validation"

// TestMain runs the suite against a real API server, the only place CRD
// schemas and CEL rules are enforced.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		c, err := cluster.Start(cluster.Options{WithoutControllerManager: true, WithoutMetalLB: true})
		if err != nil {
			panic(err)
		}
		defer func() { _ = c.Stop() }()
		scheme := runtime.NewScheme()
		_ = corev1.AddToScheme(scheme)
		_ = v1alpha1.AddToScheme(scheme)
		cfg = c.Config
		k8s, err = client.New(c.Config, client.Options{Scheme: scheme})
		if err != nil {
			panic(err)
		}
		if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			panic(err)
		}
		// What a test creates is deleted when it ends (nothing here holds a
		// finalizer), and the package fails if anything is left.
		kit = testkit.New(k8s).Tidy(testkit.Tidying{Within: 30 * time.Second})
		sights := []testkit.Sight{
			{Kind: "IPAddressClass", List: &v1alpha1.IPAddressClassList{}},
			{Kind: "IPAddress", List: &v1alpha1.IPAddressList{}},
			{Kind: "IPAddressClaim", List: &v1alpha1.IPAddressClaimList{}},
		}
		before, err := kit.Inventory(context.Background(), sights)
		if err != nil {
			panic(err)
		}
		if code := m.Run(); code != 0 {
			return code
		}
		return kit.LeftBehind(before, sights, 30*time.Second)
	}())
}

func address(name, ip string, mutate ...func(*v1alpha1.IPAddress)) *v1alpha1.IPAddress {
	a := &v1alpha1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.IPAddressSpec{
			Address:   ip,
			ClassName: "public",
			Source:    v1alpha1.AddressSource{FromClass: &v1alpha1.FromClassSource{}},
		},
	}
	for _, m := range mutate {
		m(a)
	}
	return a
}

func class(name string, mutate ...func(*v1alpha1.IPAddressClass)) *v1alpha1.IPAddressClass {
	c := &v1alpha1.IPAddressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.IPAddressClassSpec{Provisioner: "metallb.drivers.local.sdn.cozystack.io"},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func claim(name string, mutate ...func(*v1alpha1.IPAddressClaim)) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// expectInvalid asserts err is an Invalid error whose causes name field with a
// message containing msg.
func expectInvalid(g Gomega, err error, field, msg string) {
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	status := err.(apierrors.APIStatus).Status()
	g.Expect(status.Details).NotTo(BeNil())
	g.Expect(status.Details.Causes).To(ContainElement(And(
		HaveField("Field", field),
		HaveField("Message", ContainSubstring(msg)),
	)), "full error: %v", err)
}

func TestRejectsBadObjectsAtCreation(t *testing.T) {
	cases := []struct {
		name  string
		obj   client.Object
		field string
		msg   string
	}{
		{"address that is not an IP", address("bad-1", "not-an-ip"), "spec.address", "must be a valid IPv4 or IPv6 address"},
		{"IPv4 address out of range", address("bad-2", "203.0.113.256"), "spec.address", "must be a valid IPv4 or IPv6 address"},
		{"IPv4 address with a prefix", address("bad-3", "203.0.113.7/32"), "spec.address", "must be a valid IPv4 or IPv6 address"},
		{"IPv4 address with leading zeros", address("bad-4", "203.0.113.07"), "spec.address", "must be a valid IPv4 or IPv6 address"},
		{"IPv6 address with a zone", address("bad-5", "fe80::1%eth0"), "spec.address", "must be a valid IPv4 or IPv6 address"},
		{"IPv6 address not in canonical form", address("bad-6", "2001:DB8:0:0::7"), "spec.address", "canonical form"},
		{"empty address", address("bad-7", ""), "spec.address", "at least 1 chars long"},
		{"source with both members", address("bad-8", "203.0.113.8", func(a *v1alpha1.IPAddress) {
			a.Spec.Source.ProviderRef = &v1alpha1.ProviderReference{ID: "r-1"}
		}), "spec.source", "exactly one of fromClass or providerRef"},
		{"source with neither member", address("bad-9", "203.0.113.9", func(a *v1alpha1.IPAddress) {
			a.Spec.Source = v1alpha1.AddressSource{}
		}), "spec.source", "exactly one of fromClass or providerRef"},
		{"address without a class", address("bad-10", "203.0.113.10", func(a *v1alpha1.IPAddress) {
			a.Spec.ClassName = ""
		}), "spec.className", "at least 1 chars long"},
		{"address reclaim policy unknown", address("bad-11", "203.0.113.11", func(a *v1alpha1.IPAddress) {
			a.Spec.ReclaimPolicy = "Recycle"
		}), "spec.reclaimPolicy", `supported values: "Retain", "Delete"`},
		{"claimRef to a bad namespace", address("bad-12", "203.0.113.12", func(a *v1alpha1.IPAddress) {
			a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: "Tenant_A", Name: "web"}
		}), "spec.claimRef.namespace", "must be a namespace name"},
		{"class reclaim policy unknown", class("bad-13", func(c *v1alpha1.IPAddressClass) {
			c.Spec.ReclaimPolicy = "Recycle"
		}), "spec.reclaimPolicy", `supported values: "Retain", "Delete"`},
		{"class without a provisioner", class("bad-14", func(c *v1alpha1.IPAddressClass) {
			c.Spec.Provisioner = ""
		}), "spec.provisioner", "at least 1 chars long"},
		{"negative releaseDelay", class("bad-15", func(c *v1alpha1.IPAddressClass) {
			c.Spec.ReleaseDelay = &metav1.Duration{Duration: -5 * time.Minute}
		}), "spec.releaseDelay", "must be a non-negative duration"},
		{"claim family unknown", claim("bad-16", func(c *v1alpha1.IPAddressClaim) {
			c.Spec.Family = "IPv5"
		}), "spec.family", `supported values: "IPv4", "IPv6", "Dual"`},
		{"claim addressName not an object name", claim("bad-17", func(c *v1alpha1.IPAddressClaim) {
			c.Spec.AddressName = "IP_203.0.113.7"
		}), "spec.addressName", "must be the name of an IPAddress"},
		{"claim addressName with family Dual", claim("bad-18", func(c *v1alpha1.IPAddressClaim) {
			c.Spec.Family = v1alpha1.Dual
			c.Spec.AddressName = "ip-203-0-113-7"
		}), "spec", "cannot be combined with family Dual"},
		{"claim className not an object name", claim("bad-19", func(c *v1alpha1.IPAddressClaim) {
			c.Spec.ClassName = "Public Pool"
		}), "spec.className", "must be the name of an IPAddressClass"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			expectInvalid(g, k8s.Create(t.Context(), tc.obj), tc.field, tc.msg)
		})
	}
}

func TestRejectsBadUpdates(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	a := address("ip-203-0-113-50", "203.0.113.50", func(a *v1alpha1.IPAddress) {
		a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: ns, Name: "web"}
	})
	kit.Make(t, g, a)
	c := class("immutable")
	kit.Make(t, g, c)
	cl := claim("immutable")
	kit.Make(t, g, cl)

	cases := []struct {
		name   string
		obj    client.Object
		mutate func()
		field  string
		msg    string
	}{
		{"changed spec.address", a, func() { a.Spec.Address = "203.0.113.51" }, "spec.address", "spec.address is immutable"},
		{"changed spec.className", a, func() { a.Spec.ClassName = "private" }, "spec.className", "spec.className is immutable"},
		{"changed spec.source", a, func() {
			a.Spec.Source = v1alpha1.AddressSource{ProviderRef: &v1alpha1.ProviderReference{ID: "r-1"}}
		}, "spec.source", "spec.source is immutable"},
		{"claimRef pointed at another claim", a, func() { a.Spec.ClaimRef.Name = "api" }, "spec", "cannot be pointed at another claim"},
		{"changed provisioner", c, func() { c.Spec.Provisioner = "other.drivers.local.sdn.cozystack.io" }, "spec.provisioner", "spec.provisioner is immutable"},
		{"changed claim family", cl, func() { cl.Spec.Family = v1alpha1.IPv6 }, "spec.family", "spec.family is immutable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tc.obj), tc.obj)).To(Succeed())
			tc.mutate()
			expectInvalid(g, k8s.Update(ctx, tc.obj), tc.field, tc.msg)
		})
	}

	t.Run("completing a pre-binding's uid is allowed, changing it is not", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		a.Spec.ClaimRef.UID = "11111111-1111-1111-1111-111111111111"
		g.Expect(k8s.Update(ctx, a)).To(Succeed())
		a.Spec.ClaimRef.UID = "22222222-2222-2222-2222-222222222222"
		expectInvalid(g, k8s.Update(ctx, a), "spec", "cannot be pointed at another claim")
	})

	t.Run("claimRef of a Bound address cannot be cleared, of a Released one can", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		a.Status.Phase = v1alpha1.AddressBound
		g.Expect(k8s.Status().Update(ctx, a)).To(Succeed())
		a.Spec.ClaimRef = nil
		expectInvalid(g, k8s.Update(ctx, a), "spec.claimRef", "cannot be cleared")

		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		a.Status.Phase = v1alpha1.AddressReleased
		g.Expect(k8s.Status().Update(ctx, a)).To(Succeed())
		a.Spec.ClaimRef = nil
		g.Expect(k8s.Update(ctx, a)).To(Succeed())
	})
}

func TestAcceptsGoodObjectsWithDefaults(t *testing.T) {
	ctx := t.Context()

	t.Run("IPv4 address", func(t *testing.T) {
		g := NewWithT(t)
		a := address("ip-203-0-113-7", "203.0.113.7")
		kit.Make(t, g, a)
		g.Expect(a.Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimRetain))
	})
	t.Run("IPv6 address wrapping a provider reservation, pre-bound", func(t *testing.T) {
		g := NewWithT(t)
		a := address("ip-2001-db8--7", "2001:db8::7", func(a *v1alpha1.IPAddress) {
			a.Spec.Source = v1alpha1.AddressSource{ProviderRef: &v1alpha1.ProviderReference{ID: "eip-0abc"}}
			a.Spec.ReclaimPolicy = v1alpha1.ReclaimDelete
			a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: "tenant-a", Name: "web"}
		})
		kit.Make(t, g, a)
		g.Expect(a.Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimDelete))
	})
	t.Run("class with parameters kept as written", func(t *testing.T) {
		g := NewWithT(t)
		c := class("public", func(c *v1alpha1.IPAddressClass) {
			c.Spec.Parameters = &runtime.RawExtension{Raw: []byte(`{"addresses":["203.0.113.0/24"],"anything":{"nested":[1,2]}}`)}
			c.Spec.ReleaseDelay = &metav1.Duration{Duration: 90 * time.Minute}
		})
		kit.Make(t, g, c)
		got := &v1alpha1.IPAddressClass{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
		g.Expect(got.Spec.ReclaimPolicy).To(Equal(v1alpha1.ReclaimRetain))
		g.Expect(got.Spec.ReleaseDelay.Duration).To(Equal(90 * time.Minute))
		g.Expect(string(got.Spec.Parameters.Raw)).To(MatchJSON(`{"addresses":["203.0.113.0/24"],"anything":{"nested":[1,2]}}`))
	})
	t.Run("zero releaseDelay", func(t *testing.T) {
		g := NewWithT(t)
		kit.Make(t, g, class("instant", func(c *v1alpha1.IPAddressClass) {
			c.Spec.ReleaseDelay = &metav1.Duration{}
		}))
	})
	t.Run("claim with nothing set defaults to IPv4", func(t *testing.T) {
		g := NewWithT(t)
		c := claim("defaults")
		kit.Make(t, g, c)
		g.Expect(c.Spec.Family).To(Equal(v1alpha1.IPv4))
	})
	t.Run("claim naming an address", func(t *testing.T) {
		g := NewWithT(t)
		kit.Make(t, g, claim("named", func(c *v1alpha1.IPAddressClaim) {
			c.Spec.ClassName = "public"
			c.Spec.AddressName = "ip-203-0-113-7"
		}))
	})
}

func TestSamplesAreAccepted(t *testing.T) {
	root, err := cluster.RepoRoot()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "local_*.yaml"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(files).To(HaveLen(3))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := NewWithT(t)
			raw, err := os.ReadFile(f)
			g.Expect(err).NotTo(HaveOccurred())
			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal(raw, &obj.Object)).To(Succeed())
			obj.SetName("sample-" + obj.GetName())
			g.Expect(k8s.Create(t.Context(), obj, client.DryRunAll)).To(Succeed())
		})
	}
}
