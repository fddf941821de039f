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

package manager

import (
	"encoding/json"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decoded is meta as the cache gets it: every string a copy of its own.
func decoded(t *testing.T, name string) *metav1.ObjectMeta {
	t.Helper()
	m := &metav1.ObjectMeta{}
	raw := `{"name":"` + name + `","namespace":"tenant","labels":{"app.kubernetes.io/managed-by":"metallb-iad"},` +
		`"annotations":{"metallb.io/loadBalancerIPs":"192.0.2.1"},"finalizers":["local.sdn.cozystack.io/teardown"],` +
		`"ownerReferences":[{"apiVersion":"local.sdn.cozystack.io/v1alpha1","kind":"IPAddress","name":"` + name + `","uid":"u"}]}`
	if err := json.Unmarshal([]byte(raw), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func shared(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// only is the one key of m.
func only(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func TestInternMetaSharesWhatObjectsRepeat(t *testing.T) {
	a, b := decoded(t, "a"), decoded(t, "b")
	if shared(a.Namespace, b.Namespace) {
		t.Fatal("the decoded namespaces share their bytes before interning; the test proves nothing")
	}
	InternMeta(a)
	InternMeta(b)
	la, lb, aa, ab := only(a.Labels), only(b.Labels), only(a.Annotations), only(b.Annotations)
	for _, pair := range [][2]string{
		{a.Namespace, b.Namespace},
		{la, lb},
		{a.Labels[la], b.Labels[lb]},
		{aa, ab},
		{a.Annotations[aa], b.Annotations[ab]},
		{a.Finalizers[0], b.Finalizers[0]},
		{a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		{a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
	} {
		if pair[0] != pair[1] || !shared(pair[0], pair[1]) {
			t.Errorf("%q and %q: want one copy", pair[0], pair[1])
		}
	}
	if a.Name != "a" || a.Labels["app.kubernetes.io/managed-by"] != "metallb-iad" || a.OwnerReferences[0].Name != "a" ||
		a.Annotations["metallb.io/loadBalancerIPs"] != "192.0.2.1" {
		t.Errorf("interning changed the metadata: %+v", a)
	}
}

func TestInternConditionsSharesReasons(t *testing.T) {
	a := []metav1.Condition{{Type: string([]byte("Held")), Status: "True", Reason: string([]byte("Held")), Message: string([]byte("m"))}}
	b := []metav1.Condition{{Type: string([]byte("Held")), Status: "True", Reason: string([]byte("Held")), Message: string([]byte("m"))}}
	InternConditions(a)
	InternConditions(b)
	if !shared(a[0].Type, b[0].Type) || !shared(a[0].Reason, b[0].Reason) || !shared(a[0].Message, b[0].Message) {
		t.Errorf("conditions not shared: %+v %+v", a, b)
	}
}
