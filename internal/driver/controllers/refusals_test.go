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

package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestARefusalIsReportedOnceUntilItChanges(t *testing.T) {
	var r refusals
	svc := types.NamespacedName{Namespace: "ns", Name: "svc"}
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		what    string
		uid     types.UID
		message string
		at      time.Duration
		forget  bool
		want    bool
	}{
		{what: "first refusal", uid: "u1", message: "claim web not found", want: true},
		{what: "same refusal, next pass", uid: "u1", message: "claim web not found", at: time.Second},
		{what: "same refusal, just before the repeat interval", uid: "u1", message: "claim web not found", at: refusalRepeat - time.Second},
		{what: "another reason", uid: "u1", message: "claim web is not Bound", at: refusalRepeat, want: true},
		{what: "the same again", uid: "u1", message: "claim web is not Bound", at: refusalRepeat + time.Second},
		{what: "a Service of the same name, created again", uid: "u2", message: "claim web is not Bound", at: refusalRepeat + 2*time.Second, want: true},
		{what: "a refusal that lasts, reported again", uid: "u2", message: "claim web is not Bound", at: 2*refusalRepeat + 2*time.Second, want: true},
		{what: "after the request was honoured", uid: "u2", message: "claim web is not Bound", at: 2*refusalRepeat + 3*time.Second, forget: true, want: true},
	}
	for _, s := range steps {
		if s.forget {
			r.forget(svc)
		}
		if got := r.report(svc, s.uid, s.message, t0.Add(s.at)); got != s.want {
			t.Errorf("%s: reported %v, want %v", s.what, got, s.want)
		}
	}
}
