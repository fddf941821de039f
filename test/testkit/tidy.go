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

package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Tidying is how a kit leaves the cluster as each test found it. With it,
// every namespace the kit makes for a test, and every object a test hands
// to Own, is removed when the test ends, and the test fails if any of them,
// any address of its classes or in its namespaces, or anything Leftovers
// reports of its classes, is still there after Within. A suite whose tests
// leave things behind pays for them in every later test.
type Tidying struct {
	// Within bounds the wait for each kind of thing to go.
	Within time.Duration
	// Prepare runs first, in the test's cleanup: whatever lets go of the
	// test's objects (the managers, the backend) must be running.
	Prepare func(t *testing.T)
	// Leftovers lists what the backend still keeps for a class (its holds,
	// its pools), one line each; empty once the class is gone.
	Leftovers func(ctx context.Context, c client.Client, class string) ([]string, error)
}

// tidy is what one test made.
type tidy struct {
	namespaces []string
	owned      []client.Object
}

// Tidy makes the kit tidy up after each test as tidying says.
func (k *Kit) Tidy(tidying Tidying) *Kit {
	k.tidying = &tidying
	k.tidies = &sync.Map{}
	return k
}

// Own records objects t made that the kit must remove when t ends (classes,
// addresses, a backend's objects), and checks for: a class's addresses
// and Leftovers go with it. Without tidying it does nothing.
func (k *Kit) Own(t *testing.T, objs ...client.Object) {
	if r := k.record(t); r != nil {
		k.mu.Lock()
		r.owned = append(r.owned, objs...)
		k.mu.Unlock()
	}
}

// Make creates objects t owns (see Own): classes, addresses and other
// cluster-wide objects, removed when t ends.
func (k *Kit) Make(t *testing.T, g Gomega, objs ...client.Object) {
	k.Own(t, objs...)
	k.Create(g, objs...)
}

// record returns t's record, registering its cleanup on first use.
func (k *Kit) record(t *testing.T) *tidy {
	if k.tidying == nil {
		return nil
	}
	r, loaded := k.tidies.LoadOrStore(t, &tidy{})
	if !loaded {
		t.Cleanup(func() { k.tidyUp(t, r.(*tidy)) })
	}
	return r.(*tidy)
}

// tidyUp removes what t made and fails t if anything of it stays. A
// namespace's claims and Services are deleted and waited for here (they are
// what the managers and the backend keep state for); the namespace object
// itself is deleted but not waited for, since kube-controller-manager takes
// at least five seconds over every namespace: the package's final check
// (Leaks) makes sure it went.
func (k *Kit) tidyUp(t *testing.T, r *tidy) {
	k.tidies.Delete(t)
	if k.tidying.Prepare != nil {
		k.tidying.Prepare(t)
	}
	ctx := context.Background()
	k.mu.Lock()
	namespaces, owned := slices.Clone(r.namespaces), slices.Clone(r.owned)
	k.mu.Unlock()
	var classes []string
	owned = slices.DeleteFunc(owned, func(o client.Object) bool {
		switch o.(type) {
		case *v1alpha1.IPAddressClass:
			classes = append(classes, o.GetName())
		case *corev1.Namespace: // tidied as Namespace makes them
			namespaces = append(namespaces, o.GetName())
			return true
		}
		return false
	})
	for _, ns := range namespaces {
		for _, kind := range []client.Object{&v1alpha1.IPAddressClaim{}, &corev1.Service{}} {
			if err := k.DeleteAllOf(ctx, kind, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("tidying up: deleting the %Ts of namespace %s: %v", kind, ns, err)
			}
		}
	}
	// The addresses first: a class is kept while any of its addresses is.
	addresses, err := k.addressesOf(ctx, classes, namespaces)
	if err != nil {
		t.Errorf("tidying up: listing addresses: %v", err)
		return
	}
	owned = append(addresses, owned...)
	for _, o := range owned {
		if err := k.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("tidying up: deleting %T %s: %v", o, o.GetName(), err)
		}
	}
	for _, ns := range namespaces {
		for _, list := range []client.ObjectList{&v1alpha1.IPAddressClaimList{}, &corev1.ServiceList{}} {
			if left := k.waitEmpty(ctx, list, ns); len(left) > 0 {
				t.Errorf("tidying up: %v still in namespace %s after %v", left, ns, k.tidying.Within)
			}
		}
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if err := k.Delete(ctx, n); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("tidying up: deleting namespace %s: %v", ns, err)
		}
	}
	for _, o := range owned {
		if err := k.waitGone(ctx, o); err != nil {
			t.Errorf("tidying up: %T %s/%s is still there after %v: %v", o, o.GetNamespace(), o.GetName(), k.tidying.Within, err)
		}
	}
	late, err := k.addressesOf(ctx, classes, namespaces)
	if err != nil {
		t.Errorf("tidying up: listing addresses: %v", err)
	}
	for _, a := range late {
		t.Errorf("tidying up: IPAddress %s outlived its class or namespace", a.GetName())
	}
	if k.tidying.Leftovers == nil {
		return
	}
	for _, class := range classes {
		var left []string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, k.tidying.Within, true, func(ctx context.Context) (bool, error) {
			left, err = k.tidying.Leftovers(ctx, k.Client, class)
			return err == nil && len(left) == 0, nil
		})
		if err != nil {
			t.Errorf("tidying up: class %s left %v behind", class, left)
		}
	}
}

// waitEmpty waits until namespace ns has no object of list's kind, at most
// Within, and returns the names of those left.
func (k *Kit) waitEmpty(ctx context.Context, list client.ObjectList, ns string) []string {
	var left []string
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, k.tidying.Within, true, func(ctx context.Context) (bool, error) {
		left = nil
		if err := k.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			left = append(left, o.(client.Object).GetName())
			return nil
		})
		return len(left) == 0, nil
	})
	return left
}

// addressesOf lists the addresses of classes or bound to a claim in one of
// namespaces.
func (k *Kit) addressesOf(ctx context.Context, classes, namespaces []string) ([]client.Object, error) {
	if len(classes) == 0 && len(namespaces) == 0 {
		return nil, nil
	}
	list := &v1alpha1.IPAddressList{}
	if err := k.List(ctx, list); err != nil {
		return nil, err
	}
	var out []client.Object
	for i := range list.Items {
		a := &list.Items[i]
		if slices.Contains(classes, a.Spec.ClassName) || (a.Spec.ClaimRef != nil && slices.Contains(namespaces, a.Spec.ClaimRef.Namespace)) {
			out = append(out, a)
		}
	}
	return out, nil
}

// waitGone waits until o is gone, at most Within, and otherwise says what
// keeps it.
func (k *Kit) waitGone(ctx context.Context, o client.Object) error {
	live := o.DeepCopyObject().(client.Object)
	seen := false // whether a look found it, so that live says what keeps it
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, k.tidying.Within, true, func(ctx context.Context) (bool, error) {
		got := o.DeepCopyObject().(client.Object)
		switch last = k.Get(ctx, client.ObjectKeyFromObject(o), got); {
		case last == nil:
			live, seen = got, true
		case apierrors.IsNotFound(last):
			return true, nil
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case !seen:
		return last
	case live.GetDeletionTimestamp() == nil:
		return errors.New("not deleted")
	}
	var why strings.Builder
	_, _ = fmt.Fprintf(&why, "deleted, finalizers %v", live.GetFinalizers())
	if ns, ok := live.(*corev1.Namespace); ok {
		for _, c := range ns.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				_, _ = fmt.Fprintf(&why, "; %s: %s", c.Type, c.Message)
			}
		}
	}
	return errors.New(why.String())
}

// Sight is one kind a package's final check looks at: List's kind, in
// Namespace ("" for all namespaces, or a cluster-scoped kind), less the
// objects Skip names (ones that come and go on their own).
type Sight struct {
	Kind      string
	List      client.ObjectList
	Namespace string
	Skip      func(name string) bool
}

// SightOf is a Sight of kind in namespace that lists metadata only, so
// that kinds with no Go type here (MetalLB's, say) need none.
func SightOf(kind schema.GroupVersionKind, namespace string) Sight {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	return Sight{Kind: kind.Kind, List: list, Namespace: namespace}
}

// Inventory is what the sights showed, as "Kind name" (or "Kind
// namespace/name") lines.
type Inventory map[string]bool

// Inventory lists what sights show now.
func (k *Kit) Inventory(ctx context.Context, sights []Sight) (Inventory, error) {
	out := Inventory{}
	for _, s := range sights {
		if err := k.List(ctx, s.List, client.InNamespace(s.Namespace)); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", s.Kind, err)
		}
		_ = meta.EachListItem(s.List, func(o runtime.Object) error {
			obj := o.(client.Object)
			if s.Skip != nil && s.Skip(obj.GetName()) {
				return nil
			}
			name := obj.GetName()
			if ns := obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			out[s.Kind+" "+name] = true
			return nil
		})
	}
	return out, nil
}

// Leaks waits, at most within, until sights show nothing that before did
// not, and returns what they still show: what a package's tests left
// behind. A package's TestMain calls it after its tests ran, and fails if
// anything stays.
func (k *Kit) Leaks(ctx context.Context, before Inventory, sights []Sight, within time.Duration) ([]string, error) {
	var left []string
	looked := false
	var last error
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		now, err := k.Inventory(ctx, sights)
		if last = err; err != nil {
			return false, nil
		}
		looked = true
		left = left[:0]
		for o := range now {
			if !before[o] {
				left = append(left, o)
			}
		}
		return len(left) == 0, nil
	})
	if !looked {
		return nil, last
	}
	// The last look may have failed on the deadline: the one before says.
	slices.Sort(left)
	return left, nil
}

// LeftBehind is the end of a package's TestMain once its tests passed: it
// returns 0 if Leaks finds nothing within, and otherwise prints what the
// tests left and returns 1, failing the package. A test that leaks makes
// every later test pay for it.
func (k *Kit) LeftBehind(before Inventory, sights []Sight, within time.Duration) int {
	left, err := k.Leaks(context.Background(), before, sights, within)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(left) == 0 {
		return 0
	}
	fmt.Fprintf(os.Stderr, "FAIL: the tests left %d objects behind:\n  %s\n", len(left), strings.Join(left, "\n  "))
	return 1
}
