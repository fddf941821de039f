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

package tombstone

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

func TestAs(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	for _, tc := range []struct {
		name string
		obj  any
		want *corev1.Service
	}{
		{"the object itself", svc, svc},
		{"a tombstone of it", toolscache.DeletedFinalStateUnknown{Key: "default/web", Obj: svc}, svc},
		{"another kind", &corev1.Pod{}, nil},
		{"a tombstone of another kind", toolscache.DeletedFinalStateUnknown{Obj: &corev1.Pod{}}, nil},
		{"nothing", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := As[*corev1.Service](tc.obj)
			if ok != (tc.want != nil) || got != tc.want {
				t.Errorf("As(%T) = %v, %v; want %v", tc.obj, got, ok, tc.want)
			}
		})
	}
}
