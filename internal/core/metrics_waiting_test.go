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

package core

import (
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func claimAt(uid string, created time.Time, phase v1alpha1.IPAddressClaimPhase, conds ...metav1.Condition) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{}
	c.UID, c.CreationTimestamp, c.Status.Phase = types.UID("uid-"+uid), metav1.NewTime(created), phase
	c.Namespace, c.Status.Conditions = "tenant", conds
	return c
}

func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason}
}

func TestOldestUnboundClaim(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := newMetrics(func() time.Time { return now })
	older := claimAt("older", now.Add(-10*time.Minute), "")
	newer := claimAt("newer", now.Add(-time.Minute), v1alpha1.ClaimPending,
		condition(v1alpha1.ConditionBound, v1alpha1.ReasonWaitingForProvisioning))
	refused := claimAt("refused", now.Add(-time.Hour), v1alpha1.ClaimPending,
		condition(v1alpha1.ConditionBound, v1alpha1.ReasonClassNotAllowed))
	refused.Namespace = "other"
	provisioning := waitKey{"tenant", v1alpha1.ReasonWaitingForProvisioning}

	steps := []struct {
		name string
		old  *v1alpha1.IPAddressClaim
		new  *v1alpha1.IPAddressClaim
		want map[waitKey]time.Duration
	}{
		{"nothing waits", nil, nil, map[waitKey]time.Duration{}},
		{"a claim not processed yet waits", nil, older, map[waitKey]time.Duration{{"tenant", "None"}: 10 * time.Minute}},
		{"a Pending claim waits under its reason", nil, newer, map[waitKey]time.Duration{
			{"tenant", "None"}: 10 * time.Minute, provisioning: time.Minute}},
		{"a refused claim waits in its own namespace", nil, refused, map[waitKey]time.Duration{
			{"tenant", "None"}: 10 * time.Minute, provisioning: time.Minute, {"other", v1alpha1.ReasonClassNotAllowed}: time.Hour}},
		{"the older claim is processed and waits for provisioning", older, claimAt("older", older.CreationTimestamp.Time, v1alpha1.ClaimPending,
			condition(v1alpha1.ConditionBound, v1alpha1.ReasonWaitingForProvisioning)), map[waitKey]time.Duration{
			provisioning: 10 * time.Minute, {"other", v1alpha1.ReasonClassNotAllowed}: time.Hour}},
		{"the older claim binds", older, claimAt("older", older.CreationTimestamp.Time, v1alpha1.ClaimBound), map[waitKey]time.Duration{
			provisioning: time.Minute, {"other", v1alpha1.ReasonClassNotAllowed}: time.Hour}},
		{"the younger claim is deleted", newer, nil, map[waitKey]time.Duration{{"other", v1alpha1.ReasonClassNotAllowed}: time.Hour}},
		{"the refused claim is deleted", refused, nil, map[waitKey]time.Duration{}},
	}
	for _, s := range steps {
		if s.old != nil || s.new != nil {
			m.observeClaim(s.old, s.new)
		}
		want := map[waitKey]float64{}
		for k, d := range s.want {
			want[k] = d.Seconds()
		}
		if got := waiting.oldestAges(); !maps.Equal(got, want) {
			t.Errorf("%s: oldest ages %v, want %v", s.name, got, want)
		}
	}
}

func TestWaitReason(t *testing.T) {
	bound := func(reason string) metav1.Condition { return condition(v1alpha1.ConditionBound, reason) }
	resolved := func(reason string) metav1.Condition { return condition(v1alpha1.ConditionClassResolved, reason) }
	for _, c := range []struct {
		name  string
		phase v1alpha1.IPAddressClaimPhase
		conds []metav1.Condition
		want  string
	}{
		{"not processed", "", nil, "None"},
		{"waits for its driver", v1alpha1.ClaimPending, []metav1.Condition{bound(v1alpha1.ReasonWaitingForProvisioning)}, "WaitingForProvisioning"},
		{"refused by the class's selector", v1alpha1.ClaimPending, []metav1.Condition{bound(v1alpha1.ReasonClassNotAllowed)}, "ClassNotAllowed"},
		{"over the namespace's limit", v1alpha1.ClaimPending, []metav1.Condition{bound(v1alpha1.ReasonClassLimitReached)}, "ClassLimitReached"},
		{"names a class that does not exist", v1alpha1.ClaimPending,
			[]metav1.Condition{resolved(v1alpha1.ReasonClassNotFound), bound(v1alpha1.ReasonWaitingForClass)}, "ClassNotFound"},
		{"two default classes", v1alpha1.ClaimPending,
			[]metav1.Condition{resolved(v1alpha1.ReasonMultipleDefaultClasses), bound(v1alpha1.ReasonWaitingForClass)}, "MultipleDefaultClasses"},
		{"waits for its class without a ClassResolved reason", v1alpha1.ClaimPending,
			[]metav1.Condition{bound(v1alpha1.ReasonWaitingForClass)}, "WaitingForClass"},
		{"a reason of another version", v1alpha1.ClaimPending, []metav1.Condition{bound("SomethingNew")}, "Other"},
	} {
		if got := waitReason(claimAt("c", time.Now(), c.phase, c.conds...)); got != c.want {
			t.Errorf("%s: reason %q, want %q", c.name, got, c.want)
		}
	}
}
