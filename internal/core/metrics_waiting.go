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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// Values of the reason label of the oldest-unbound gauge besides the claim
// condition reasons it passes through.
const (
	// waitReasonNone: the core has not written the claim's status yet.
	waitReasonNone = "None"
	// waitReasonOther: a reason this version does not know (a status
	// written by another version); it keeps the label's values bounded.
	waitReasonOther = "Other"
)

// waitReasons are the reason label's values: why a claim that is not Bound
// waits. A claim waiting for its class is reported under the ClassResolved
// condition's reason, which tells a mistyped class name (ClassNotFound) from
// an admin's mistake (MultipleDefaultClasses).
var waitReasons = map[string]bool{
	v1alpha1.ReasonWaitingForProvisioning: true,
	v1alpha1.ReasonWaitingForAddress:      true,
	v1alpha1.ReasonWaitingForClass:        true,
	v1alpha1.ReasonClassNotFound:          true,
	v1alpha1.ReasonNoDefaultClass:         true,
	v1alpha1.ReasonMultipleDefaultClasses: true,
	v1alpha1.ReasonClassNotAllowed:        true,
	v1alpha1.ReasonClassLimitReached:      true,
	v1alpha1.ReasonFamilyNotServed:        true,
	waitReasonNone:                        true,
	waitReasonOther:                       true,
}

// waitReason is the reason label of a claim that is not Bound: its Bound
// condition's reason, refined by ClassResolved's while it waits for its
// class; None before the core wrote its status; Other for a reason outside
// waitReasons.
func waitReason(c *v1alpha1.IPAddressClaim) string {
	bound := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionBound)
	if bound == nil || c.Status.Phase == "" {
		return waitReasonNone
	}
	reason := bound.Reason
	if reason == v1alpha1.ReasonWaitingForClass {
		if cr := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionClassResolved); cr != nil && cr.Reason != v1alpha1.ReasonResolved {
			reason = cr.Reason
		}
	}
	if !waitReasons[reason] {
		return waitReasonOther
	}
	return reason
}

// waitingClaim is what the gauge needs of a claim that is not Bound.
type waitingClaim struct {
	created           time.Time
	namespace, reason string
}

// waitKey is one series of the gauge.
type waitKey struct{ namespace, reason string }

// waitingClaims tracks every claim not bound yet, from the informer's
// events, so that a scrape can report how long the oldest one of each
// namespace and reason has waited without listing claims.
type waitingClaims struct {
	mu     sync.Mutex
	now    func() time.Time
	claims map[types.UID]waitingClaim
}

func (w *waitingClaims) reset(now func() time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now, w.claims = now, map[types.UID]waitingClaim{}
}

func (w *waitingClaims) remember(uid types.UID, c waitingClaim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.claims[uid] = c
}

func (w *waitingClaims) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.claims, uid)
}

// oldestAges is the age in seconds of the oldest claim of each namespace
// and reason that has one. It walks the waiting claims: few, unless binding
// is stuck.
func (w *waitingClaims) oldestAges() map[waitKey]float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[waitKey]float64{}
	if w.now == nil {
		return out
	}
	now := w.now()
	for _, c := range w.claims {
		k := waitKey{c.namespace, c.reason}
		if age := max(now.Sub(c.created).Seconds(), 0); age >= out[k] {
			out[k] = age
		}
	}
	return out
}

// waitingCollector serves the oldest-unbound gauge from waitingClaims at
// scrape time: a series per namespace and reason with a waiting claim, none
// once nothing waits.
type waitingCollector struct {
	desc    *prometheus.Desc
	waiting *waitingClaims
}

func (c *waitingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *waitingCollector) Collect(ch chan<- prometheus.Metric) {
	for k, age := range c.waiting.oldestAges() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, age, k.namespace, k.reason)
	}
}

// classSet is a set of class names safe for concurrent use.
type classSet struct{ m sync.Map }

// goneClasses are the classes deleted since the manager started.
var goneClasses = &classSet{}

func (s *classSet) add(name string)      { s.m.Store(name, struct{}{}) }
func (s *classSet) remove(name string)   { s.m.Delete(name) }
func (s *classSet) has(name string) bool { _, ok := s.m.Load(name); return ok }
