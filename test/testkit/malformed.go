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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Malformed is one bad object, or one bad change to a good one. Exactly one
// of Refused and Reason is set: Refused is what the API server's refusal
// says; Reason (with Detail in its message) is what a condition or an event
// of the object says once a manager has seen it.
type Malformed struct {
	Name    string
	Obj     client.Object
	Write   func(ctx context.Context) error
	Refused string
	Reason  string
	Detail  string
}

// Refuse is a case the API server refuses to create, saying msg.
func Refuse(what string, obj client.Object, msg string) Malformed {
	return Malformed{Name: "refused: " + what, Obj: obj, Refused: msg}
}

// RefuseChange is a change to obj, an object that exists, that the API
// server refuses, saying msg.
func (k *Kit) RefuseChange(what string, obj client.Object, mutate func(client.Object), msg string) Malformed {
	return Malformed{Name: "refused: " + what, Obj: obj, Refused: msg, Write: func(ctx context.Context) error {
		if err := k.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return k.Update(ctx, obj)
	}}
}

// TryMalformed runs each case as a subtest of t: it writes the case and
// checks that the API server refused it, or that a condition or an event
// of its object says what is wrong within timeout. What the cases create is
// removed once t ends.
func (k *Kit) TryMalformed(t *testing.T, cases []Malformed, timeout, tick time.Duration) {
	ctx := context.Background()
	owner := t
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			g := NewWithT(t)
			var err error
			if tc.Write != nil {
				err = tc.Write(ctx)
			} else {
				k.Own(owner, tc.Obj)
				err = k.Client.Create(ctx, tc.Obj)
			}
			if tc.Refused != "" {
				g.Expect(err).To(HaveOccurred(), "case %d is refused at admission", i)
				g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
				g.Expect(err.Error()).To(ContainSubstring(tc.Refused))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Eventually(func() []string { return k.Explanations(g, tc.Obj) }, timeout, tick).Should(ContainElement(And(
				HavePrefix(tc.Reason+": "), ContainSubstring(tc.Detail))), "case %d says what is wrong", i)
		})
	}
}

// Explanations lists "reason: message" of every condition of obj and every
// event about it: all a user reads to learn what is wrong with it.
func (k *Kit) Explanations(g Gomega, obj client.Object) []string {
	g.Expect(k.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var conds []metav1.Condition
	switch o := obj.(type) {
	case *v1alpha1.IPAddressClass:
		conds = o.Status.Conditions
	case *v1alpha1.IPAddressClaim:
		conds = o.Status.Conditions
	case *v1alpha1.IPAddress:
		conds = o.Status.Conditions
	}
	var out []string
	for _, c := range conds {
		out = append(out, c.Reason+": "+c.Message)
	}
	return append(out, k.events(g, obj, func(e *eventsv1.Event) (string, bool) { return e.Reason + ": " + e.Note, true })()...)
}
