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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func withSelector(sel metav1.LabelSelector) func(*v1alpha1.IPAddressClass) {
	return func(c *v1alpha1.IPAddressClass) { c.Spec.NamespaceSelector = &sel }
}

func expr(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

const selectorField = "spec.namespaceSelector"

func TestRejectsBadClassAccess(t *testing.T) {
	cases := []struct {
		name  string
		class *v1alpha1.IPAddressClass
		field string
		msg   string
	}{
		{"unknown operator", class("access-1", withSelector(expr("tier", "Near", "x"))),
			selectorField, "operator must be In, NotIn, Exists or DoesNotExist"},
		{"In without values", class("access-2", withSelector(expr("tier", metav1.LabelSelectorOpIn))),
			selectorField, "with operator In or NotIn needs at least one value"},
		{"Exists with values", class("access-3", withSelector(expr("tier", metav1.LabelSelectorOpExists, "x"))),
			selectorField, "with operator Exists or DoesNotExist takes no values"},
		{"negative limit", class("access-7", func(c *v1alpha1.IPAddressClass) { n := int32(-1); c.Spec.AddressesPerNamespace = &n }),
			"spec.addressesPerNamespace", "greater than or equal to 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectInvalid(NewWithT(t), k8s.Create(t.Context(), tc.class), tc.field, tc.msg)
		})
	}
}

func TestAcceptsClassAccess(t *testing.T) {
	g := NewWithT(t)
	zero := int32(0)
	for i, sel := range []metav1.LabelSelector{
		{},
		{MatchLabels: map[string]string{"example.com/tier": "public"}},
		expr("tier", metav1.LabelSelectorOpNotIn, "a", "b"),
		expr("example.com/public", metav1.LabelSelectorOpDoesNotExist),
	} {
		c := class("access-ok-"+string(rune('a'+i)), withSelector(sel), func(c *v1alpha1.IPAddressClass) { c.Spec.AddressesPerNamespace = &zero })
		kit.Make(t, g, c)
	}
}
