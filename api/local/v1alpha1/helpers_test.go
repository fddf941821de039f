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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// TestDuplicateOf: of the IPAddresses recording one address, the one the
// core already let keep it keeps it, then one bound to a claim, then the
// one created first, then the smallest name.
func TestDuplicateOf(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	type addr struct {
		name    string
		created metav1.Time
		verdict string // the reason of the core's Bound condition; "" for none
		bound   bool
	}
	for _, tc := range []struct {
		name  string
		a     addr
		other addr
		// keeps: a keeps the address; otherwise other does.
		keeps bool
	}{
		{"created first", addr{"b", t0, "", false}, addr{"a", t1, "", false}, true},
		{"created later", addr{"a", t1, "", false}, addr{"b", t0, "", false}, false},
		{"same second: smaller name", addr{"a", t0, "", false}, addr{"b", t0, "", false}, true},
		{"same second: larger name", addr{"b", t0, "", false}, addr{"a", t0, "", false}, false},
		{"bound from birth, same second, larger name", addr{"ip-1", t0, "", true}, addr{"a-ip-1", t0, "", false}, true},
		{"bound, created later", addr{"a", t1, "", true}, addr{"b", t0, "", false}, true},
		{"kept by the core's verdict over a newcomer of smaller name", addr{"z", t0, v1alpha1.ReasonAvailable, false},
			addr{"a", t0, "", false}, true},
		{"kept by the core's verdict over a later newcomer bound by hand", addr{"z", t0, v1alpha1.ReasonAvailable, false},
			addr{"a", t1, "", true}, true},
		{"a duplicate's verdict keeps nothing", addr{"a", t0, v1alpha1.ReasonDuplicate, false},
			addr{"z", t0, v1alpha1.ReasonBound, true}, false},
		{"both kept: the bound one", addr{"z", t0, v1alpha1.ReasonBound, true}, addr{"a", t0, v1alpha1.ReasonAvailable, false}, true},
		{"both kept and bound: the first created", addr{"z", t0, v1alpha1.ReasonBound, true}, addr{"a", t1, v1alpha1.ReasonBound, true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(x addr) *v1alpha1.IPAddress {
				a := &v1alpha1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: x.name, UID: types.UID("uid-" + x.name), CreationTimestamp: x.created},
					Spec: v1alpha1.IPAddressSpec{Address: "192.0.2.1", ClassName: "c"}}
				if x.bound {
					a.Spec.ClaimRef = &v1alpha1.ClaimReference{Namespace: "ns", Name: "web", UID: "uid-web"}
				}
				if x.verdict != "" {
					a.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionBound, Reason: x.verdict}}
				}
				return a
			}
			a, other := build(tc.a), build(tc.other)
			got := a.DuplicateOf([]v1alpha1.IPAddress{*a, *other})
			switch {
			case tc.keeps && got != nil:
				t.Errorf("%s keeps the address, but DuplicateOf names %s", a.Name, got.Name)
			case !tc.keeps && (got == nil || got.Name != other.Name):
				t.Errorf("%s keeps the address, but DuplicateOf returned %v", other.Name, got)
			}
			// Each sees the same keeper.
			if back := other.DuplicateOf([]v1alpha1.IPAddress{*a, *other}); (back == nil) == tc.keeps {
				t.Errorf("%s and %s disagree on which keeps the address", a.Name, other.Name)
			}
		})
	}
}
