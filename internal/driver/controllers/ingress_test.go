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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestIngressLogMeasuresUnheldWindowsOfLedgerAddresses(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	var seen []float64
	l := newIngressLog(clk, func(s float64) { seen = append(seen, s) }, func(ip string) bool { return ip != "10.0.0.9" })

	l.change(nil, []string{"10.0.0.1"}) // the hold reports it
	l.change(nil, []string{"10.0.0.1"}) // a workload joins (shared)
	l.change([]string{"10.0.0.1"}, nil) // the hold goes
	g.Expect(seen).To(BeEmpty(), "never unreported, nothing to measure")

	l.change([]string{"10.0.0.1"}, nil) // the workload lets go (gap)
	clk.SetTime(clk.Now().Add(1500 * time.Millisecond))
	l.change(nil, []string{"10.0.0.1"}) // the hold is back
	g.Expect(seen).To(Equal([]float64{1.5}))

	l.change(nil, []string{"10.0.0.9"})
	l.change([]string{"10.0.0.9"}, nil)
	l.change(nil, []string{"10.0.0.9"})
	g.Expect(seen).To(HaveLen(1), "an address outside the ledger is not measured")
}

func TestRetryTokenChangesOnlyWhenSomethingLetGo(t *testing.T) {
	g := NewWithT(t)
	l := newIngressLog(clocktesting.NewFakePassiveClock(time.Now()), func(float64) {}, func(string) bool { return true })
	blocker := &corev1.Service{}
	blocker.UID, blocker.ResourceVersion = "b", "1"

	l.change(nil, []string{"10.0.0.1"})
	held := l.retryToken("10.0.0.1", []*corev1.Service{blocker})
	g.Expect(l.retryToken("10.0.0.1", []*corev1.Service{blocker})).To(Equal(held), "the same state, the same token")

	blocker.ResourceVersion = "2" // told to let go
	letting := l.retryToken("10.0.0.1", []*corev1.Service{blocker})
	g.Expect(letting).NotTo(Equal(held))

	l.change([]string{"10.0.0.1"}, nil) // it let go
	free := l.retryToken("10.0.0.1", nil)
	g.Expect(free).NotTo(Equal(letting))

	l.change(nil, []string{"10.0.0.1"}) // another took it, and let go again
	l.change([]string{"10.0.0.1"}, nil)
	g.Expect(l.retryToken("10.0.0.1", nil)).NotTo(Equal(free), "free again, but after another let go: ask again")
}
