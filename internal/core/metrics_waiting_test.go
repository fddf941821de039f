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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

func claimAt(uid string, created time.Time, phase v1alpha1.IPAddressClaimPhase) *v1alpha1.IPAddressClaim {
	c := &v1alpha1.IPAddressClaim{}
	c.UID, c.CreationTimestamp, c.Status.Phase = types.UID("uid-"+uid), metav1.NewTime(created), phase
	return c
}

func TestOldestUnboundClaim(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := newMetrics(func() time.Time { return now })
	older := claimAt("older", now.Add(-10*time.Minute), "")
	newer := claimAt("newer", now.Add(-time.Minute), v1alpha1.ClaimPending)

	steps := []struct {
		name      string
		old, new  *v1alpha1.IPAddressClaim
		wantAgeOf time.Duration
	}{
		{"nothing waits", nil, nil, 0},
		{"a claim not processed yet waits", nil, older, 10 * time.Minute},
		{"a younger Pending claim does not hide it", nil, newer, 10 * time.Minute},
		{"the older claim binds", older, claimAt("older", older.CreationTimestamp.Time, v1alpha1.ClaimBound), time.Minute},
		{"the younger claim is deleted", newer, nil, 0},
	}
	for _, s := range steps {
		if s.old != nil || s.new != nil {
			m.observeClaim(s.old, s.new)
		}
		if got := waiting.oldestAge(); got != s.wantAgeOf.Seconds() {
			t.Errorf("%s: oldest age %vs, want %vs", s.name, got, s.wantAgeOf.Seconds())
		}
	}
}
