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
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Intern returns s backed by one copy shared with every other string
// interned equal to it. A decoded object holds a copy of each of its
// strings; across thousands of cached objects most are the same few
// (namespaces, label keys, finalizers, reasons). unique keeps the canonical
// copy only while a handle to it lives, so interning a string no other
// object shares costs nothing lasting.
func Intern[S ~string](s S) S {
	if s == "" {
		return s
	}
	return S(unique.Make(string(s)).Value())
}

// InternMeta interns the strings of an object's metadata that objects
// repeat: the namespace, labels and annotations, finalizers and owners'
// kinds. Names and UIDs are left alone.
func InternMeta(m *metav1.ObjectMeta) {
	m.Namespace = Intern(m.Namespace)
	m.Labels = internMap(m.Labels)
	m.Annotations = internMap(m.Annotations)
	for i := range m.Finalizers {
		m.Finalizers[i] = Intern(m.Finalizers[i])
	}
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind = Intern(ref.APIVersion), Intern(ref.Kind)
	}
}

// InternConditions interns the strings of conditions, all but their
// messages' details repeated from object to object.
func InternConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Status, c.Reason, c.Message = Intern(c.Type), Intern(c.Status), Intern(c.Reason), Intern(c.Message)
	}
}

func internMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[Intern(k)] = Intern(v)
	}
	return out
}
