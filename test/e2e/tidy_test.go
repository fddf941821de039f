//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// Every spec leaves the cluster as it found it: what it makes that would
// outlive it (namespaces, classes, MetalLB objects of its own) it records
// in a tidy, which removes it all when the spec ends, while the managers
// run, and fails the spec unless it is gone in time: the namespaces, the
// classes with their addresses, the placeholders and the MetalLB objects
// the driver keeps for them. The suite fails if anything is left that was
// not there before it (leftBehind). The specs run one at a time: a spec's
// neighbours must not see its leftovers.

// removedWithin bounds the wait for what a spec made to go.
const removedWithin = 2 * timeout

// tidy is what one spec (or the BeforeAll of an ordered container) made
// and removes when it ends.
type tidy struct {
	namespaces []string
	classes    []string
	others     []client.Object
}

// newTidy starts the record of the running node: a spec's is removed once
// the spec is over, a BeforeAll's once its container is.
func newTidy() *tidy {
	t := &tidy{}
	DeferCleanup(t.remove, NodeTimeout(2*removedWithin))
	return t
}

// namespace creates a namespace and returns its name.
func (t *tidy) namespace(ctx context.Context, name string) string {
	GinkgoHelper()
	t.namespaces = append(t.namespaces, name)
	Expect(kit.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// own records objects the spec made (with kubectl, say): a class goes with
// its addresses, placeholders and MetalLB objects.
func (t *tidy) own(objs ...client.Object) {
	for _, o := range objs {
		switch o.(type) {
		case *v1alpha1.IPAddressClass:
			t.classes = append(t.classes, o.GetName())
		case *corev1.Namespace:
			t.namespaces = append(t.namespaces, o.GetName())
		default:
			t.others = append(t.others, o)
		}
	}
}

// class creates a MetalLB class of reclaim policy Delete with the rest of
// its spec, as YAML indented under spec.
func (t *tidy) class(ctx context.Context, name, spec string) {
	GinkgoHelper()
	t.classWith(ctx, name, v1alpha1.ReclaimDelete, spec)
}

// classWith creates a MetalLB class of reclaim policy with the rest of its
// spec, as YAML indented under spec.
func (t *tidy) classWith(ctx context.Context, name string, policy v1alpha1.ReclaimPolicy, spec string) {
	GinkgoHelper()
	t.own(&v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: name}})
	apply(ctx, testkit.ClassYAML(name, metallbProvisioner, `
  reclaimPolicy: `+string(policy)+spec))
}

// classOver creates a MetalLB class over cidr of reclaim policy Retain, the
// default: for a spec that needs no more of a class than its range.
func (t *tidy) classOver(ctx context.Context, name, cidr string) {
	GinkgoHelper()
	t.classWith(ctx, name, v1alpha1.ReclaimRetain, `
  parameters: {addresses: ["`+cidr+`"]}
`)
}

// classWithDelay creates a MetalLB class over cidr of reclaim policy Retain
// whose Released addresses go back to the pool delay after their release.
func (t *tidy) classWithDelay(ctx context.Context, name, cidr string, delay time.Duration) {
	GinkgoHelper()
	t.classWith(ctx, name, v1alpha1.ReclaimRetain, `
  releaseDelay: `+delay.String()+`
  parameters: {addresses: ["`+cidr+`"]}
`)
}

// remove deletes what the spec made, with the managers and MetalLB running,
// and fails the spec if any of it is still there after removedWithin. The
// namespaces go last, once their claims and Services are gone: the
// namespace controller then empties them in one pass.
func (t *tidy) remove(ctx SpecContext) {
	By("removing what the spec made")
	Expect(h.Restore(ctx)).To(Succeed(), "bringing back what lets go of the spec's objects")
	for _, ns := range t.namespaces {
		for _, kind := range []client.Object{&v1alpha1.IPAddressClaim{}, &corev1.Service{}} {
			Expect(kit.DeleteAllOf(ctx, kind, client.InNamespace(ns))).To(Succeed(), "deleting the %T objects of %s", kind, ns)
		}
	}
	addrs := t.addresses(ctx)
	objs := make([]client.Object, 0, len(addrs)+len(t.classes)+len(t.others))
	for _, a := range addrs {
		objs = append(objs, &a)
	}
	for _, c := range t.classes {
		objs = append(objs, &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: c}})
	}
	objs = append(objs, t.others...)
	t.delete(ctx, objs...)
	Eventually(func() []string { return t.remaining(ctx, objs) }, removedWithin, tick).Should(BeEmpty(),
		"what the spec made is still there")
	namespaces := make([]client.Object, 0, len(t.namespaces))
	for _, ns := range t.namespaces {
		namespaces = append(namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	t.delete(ctx, namespaces...)
	Eventually(func() []string { return t.remaining(ctx, namespaces) }, removedWithin, tick).Should(BeEmpty(),
		"the spec's namespaces are still there")
}

// delete deletes objs, those already gone aside.
func (t *tidy) delete(ctx context.Context, objs ...client.Object) {
	GinkgoHelper()
	for _, o := range objs {
		Expect(client.IgnoreNotFound(kit.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)))).To(Succeed(),
			"deleting %T %s", o, o.GetName())
	}
}

// addresses lists the addresses of the spec's classes and those bound to a
// claim in one of its namespaces.
func (t *tidy) addresses(ctx context.Context) []v1alpha1.IPAddress {
	GinkgoHelper()
	list := &v1alpha1.IPAddressList{}
	Expect(kit.List(ctx, list)).To(Succeed())
	var out []v1alpha1.IPAddress
	for _, a := range list.Items {
		if slices.Contains(t.classes, a.Spec.ClassName) || (a.Spec.ClaimRef != nil && slices.Contains(t.namespaces, a.Spec.ClaimRef.Namespace)) {
			out = append(out, a)
		}
	}
	return out
}

// remaining describes what is left of objs, of the spec's namespaces'
// claims and Services, and of its classes.
func (t *tidy) remaining(ctx context.Context, objs []client.Object) []string {
	GinkgoHelper()
	var out []string
	for _, ns := range t.namespaces {
		for _, kind := range []schema.GroupVersionKind{v1alpha1.GroupVersion.WithKind("IPAddressClaim"), corev1.SchemeGroupVersion.WithKind("Service")} {
			for _, o := range objects(ctx, kind, ns) {
				out = append(out, fmt.Sprintf("%s %s/%s, finalizers %v", kind.Kind, ns, o.Name, o.Finalizers))
			}
		}
	}
	for _, o := range objs {
		live := o.DeepCopyObject().(client.Object)
		err := kit.Get(ctx, client.ObjectKeyFromObject(o), live)
		if apierrors.IsNotFound(err) {
			continue
		}
		Expect(err).NotTo(HaveOccurred())
		out = append(out, fmt.Sprintf("%T %s, finalizers %v%s", o, o.GetName(), live.GetFinalizers(), contentOf(live)))
	}
	for _, a := range t.addresses(ctx) {
		if !slices.ContainsFunc(objs, func(o client.Object) bool { return o.GetName() == a.Name }) {
			out = append(out, "IPAddress "+a.Name+" of the spec's, made while it was removed")
		}
	}
	for _, c := range t.classes {
		out = append(out, leftovers(ctx, c)...)
	}
	return out
}

// contentOf says what keeps a namespace being deleted: what the namespace
// controller reports of its content.
func contentOf(o client.Object) string {
	ns, ok := o.(*corev1.Namespace)
	if !ok {
		return ""
	}
	var out string
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out += "; " + c.Message
		}
	}
	return out
}

// metallbKinds are the MetalLB objects the driver renders for a class.
var metallbKinds = []schema.GroupVersionKind{params.IPAddressPoolGVK, params.L2AdvertisementGVK, params.BGPAdvertisementGVK}

// leftovers lists the placeholders and MetalLB objects the driver keeps for
// a class; none once the class is gone.
func leftovers(ctx context.Context, class string) []string {
	GinkgoHelper()
	of := client.MatchingLabels{v1alpha1.LabelClass: class}
	var out []string
	for _, l := range []struct {
		kind      schema.GroupVersionKind
		namespace string
	}{{corev1.SchemeGroupVersion.WithKind("Service"), h.PlaceholderNamespace()}, {metallbKinds[0], cluster.MetalLBNamespace},
		{metallbKinds[1], cluster.MetalLBNamespace}, {metallbKinds[2], cluster.MetalLBNamespace}} {
		for _, name := range names(ctx, l.kind, l.namespace, of) {
			out = append(out, fmt.Sprintf("%s %s/%s of class %s", l.kind.Kind, l.namespace, name, class))
		}
	}
	return out
}

// metallbObject names a MetalLB object of kind, to own one a spec applied.
func metallbObject(kind schema.GroupVersionKind, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(kind)
	o.SetNamespace(cluster.MetalLBNamespace)
	o.SetName(name)
	return o
}

// names lists the names of the objects of kind in namespace ("" for all or
// cluster-scoped) that match opts.
func names(ctx context.Context, kind schema.GroupVersionKind, namespace string, opts ...client.ListOption) []string {
	GinkgoHelper()
	items := objects(ctx, kind, namespace, opts...)
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, o.Name)
	}
	return out
}

// objects lists the metadata of the objects of kind in namespace that
// match opts.
func objects(ctx context.Context, kind schema.GroupVersionKind, namespace string, opts ...client.ListOption) []metav1.PartialObjectMetadata {
	GinkgoHelper()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	Expect(kit.List(ctx, list, append(opts, client.InNamespace(namespace))...)).To(Succeed())
	return list.Items
}

// sights are what a spec can leave behind: namespaces, classes,
// addresses, the driver's placeholders and MetalLB's pools and
// advertisements. The driver's gate probes, which come and go on their
// own, are left out.
func sights() []testkit.Sight {
	probe := func(name string) bool { return strings.HasPrefix(name, "metallb-iad-probe-") }
	out := []testkit.Sight{
		testkit.SightOf(corev1.SchemeGroupVersion.WithKind("Namespace"), ""),
		testkit.SightOf(v1alpha1.GroupVersion.WithKind("IPAddressClass"), ""),
		testkit.SightOf(v1alpha1.GroupVersion.WithKind("IPAddress"), ""),
		testkit.SightOf(corev1.SchemeGroupVersion.WithKind("Service"), h.PlaceholderNamespace()),
		testkit.SightOf(metallbKinds[0], cluster.MetalLBNamespace),
		testkit.SightOf(metallbKinds[1], cluster.MetalLBNamespace),
		testkit.SightOf(metallbKinds[2], cluster.MetalLBNamespace),
	}
	for i := range out {
		out[i].Skip = probe
	}
	return out
}
