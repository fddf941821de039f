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

package metallb

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOnlyARefusalAfterTheLastAnswerShutsTheGate: a refusal naming a
// phantom shows that MetalLB ignored single events when it made it. One
// made before MetalLB last answered from single events (the full pass that
// ended its wait makes them) leaves the gate open; one made after it (a
// MetalLB started again) shuts it.
func TestOnlyARefusalAfterTheLastAnswerShutsTheGate(t *testing.T) {
	g := NewWithT(t)
	answered := time.Date(2026, 12, 2, 15, 5, 59, 400_000_000, time.UTC)
	now := answered
	l := newLiveness(nil, "ns", time.Minute, nil)
	l.now = func() time.Time { return now }
	l.trusted = answered
	now = answered.Add(2 * time.Second)

	refusal := func(at time.Time) *corev1.Event {
		return &corev1.Event{LastTimestamp: metav1.NewTime(at.Truncate(time.Second))}
	}
	for _, at := range []time.Time{answered.Add(-20 * time.Second), answered.Add(300 * time.Millisecond)} {
		l.distrust(refusedAt(refusal(at)))
		g.Expect(l.open()).To(BeTrue(), "a refusal at %s is older than the answer at %s", at, answered)
	}
	l.distrust(refusedAt(refusal(answered.Add(1500 * time.Millisecond))))
	g.Expect(l.open()).To(BeFalse(), "a refusal a second after the answer is news")

	// An event that says nothing of its time shuts it too.
	l.trusted = answered
	g.Expect(l.open()).To(BeTrue())
	l.distrust(refusedAt(&corev1.Event{}))
	g.Expect(l.open()).To(BeFalse())
}

func TestRefusedAtReadsTheLatestTimeAnEventGives(t *testing.T) {
	g := NewWithT(t)
	first := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	ev := &corev1.Event{LastTimestamp: metav1.NewTime(first)}
	g.Expect(refusedAt(ev)).To(BeTemporally("==", first))
	ev.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(first.Add(time.Minute))}
	g.Expect(refusedAt(ev)).To(BeTemporally("==", first.Add(time.Minute)))
	ev.EventTime = metav1.NewMicroTime(first.Add(2 * time.Minute))
	g.Expect(refusedAt(ev)).To(BeTemporally("==", first.Add(2*time.Minute)))
}

func TestAPoolCountFallingToAQuarterAtOnceReadsAsAStart(t *testing.T) {
	g := NewWithT(t)
	pool := func(v4, v6 int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if v4 >= 0 {
			g.Expect(unstructured.SetNestedField(u.Object, v4, "status", "assignedIPv4")).To(Succeed())
			g.Expect(unstructured.SetNestedField(u.Object, v6, "status", "assignedIPv6")).To(Succeed())
		}
		return u
	}
	for _, c := range []struct {
		old, new *unstructured.Unstructured
		started  bool
	}{
		{pool(300, 250), pool(3, 0), true}, // the first write of a new process
		{pool(16, 0), pool(3, 0), true},    // at the least count
		{pool(300, 250), pool(100, 37), true},
		{pool(300, 250), pool(299, 250), false}, // a release
		{pool(300, 250), pool(100, 38), false},  // a quarter, not below
		{pool(15, 0), pool(0, 0), false},        // too few to tell from releases in a row
		{pool(-1, 0), pool(0, 0), false},        // no status yet
		{pool(3, 0), pool(300, 0), false},       // a pass filling the new allocator
	} {
		g.Expect(startedAgain(c.old, c.new)).To(Equal(c.started), "%v → %v", c.old.Object, c.new.Object)
	}
}

// TestAnAnswerHoldsWhileAStartWouldShowInAPool: MetalLB's answer from single
// events holds for as long as some pool has enough assigned addresses for a
// start to show in its status, however long that is; where none has, it
// holds for the trust period, and a pool that grows later does not make an
// old answer good again.
func TestAnAnswerHoldsWhileAStartWouldShowInAPool(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	l := newLiveness(nil, "ns", time.Minute, &metrics{
		ready:        prometheus.NewGauge(prometheus.GaugeOpts{Name: "ready"}),
		probes:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "probes"}, []string{"answer"}),
		probeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "probe_seconds"}),
	})
	l.now = func() time.Time { return now }
	rv := 100
	answer := func() {
		l.asked, l.set, l.order, l.answered = now, 0, []int{3, 1, 4, 0, 2}, map[int]uint64{}
		for _, i := range l.order {
			rv++
			probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(rv),
				Annotations: map[string]string{annotationProbeAsked: now.UTC().Format(time.RFC3339Nano)}}}
			g.Expect(l.observe(context.Background(), 0, i, probe)).To(Succeed())
		}
		g.Expect(l.open()).To(BeTrue(), "MetalLB answered in the order asked")
	}

	l.pool("small", 3, false)
	l.pool("big", 300, false)
	answer()
	now = now.Add(time.Hour)
	g.Expect(l.open()).To(BeTrue(), "a start would have shown in pool big")
	l.pool("big", 12, false) // released, a few at a time
	g.Expect(l.open()).To(BeFalse(), "no pool can show a start now, and the answer is an hour old")

	answer()
	now = now.Add(30 * time.Second)
	g.Expect(l.open()).To(BeTrue(), "within the trust period")
	now = now.Add(time.Minute)
	g.Expect(l.open()).To(BeFalse(), "past the trust period, with no pool that could show a start")
	l.pool("big", 40, false)
	g.Expect(l.open()).To(BeFalse(), "a start may have gone unseen while the pool was small")

	answer()
	now = now.Add(time.Hour)
	g.Expect(l.open()).To(BeTrue())
	l.pool("big", 0, true)
	g.Expect(l.open()).To(BeFalse(), "the pool that could show a start is gone")

	// A driver that starts with empty pools: MetalLB answers before any
	// pool can show a start, and one grows able to while the answer holds.
	answer()
	now = now.Add(30 * time.Second)
	l.pool("new", 16, false)
	now = now.Add(time.Hour)
	g.Expect(l.open()).To(BeTrue(), "a start would have shown in pool new since it reached 16")
	l.distrust(time.Time{}) // a start seen
	l.pool("new", 2, false)
	g.Expect(l.open()).To(BeFalse())
	l.pool("new", 300, false) // MetalLB's catch-up pass
	g.Expect(l.open()).To(BeFalse(), "only a new answer opens the gate after a start")
}
