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
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// TestBlamedReadsMetalLBsRefusals: the messages are MetalLB v0.15.2's, as
// its allocator words them.
func TestBlamedReadsMetalLBsRefusals(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		msg   string
		names []string
		ip    string
	}{
		{msg: `Failed to allocate IP for "t/web": can't change sharing key for "t/web", address also in use by iad/alloc-1-v4,t/other`,
			names: []string{"alloc-1-v4"}},
		{msg: `Failed to allocate IP for "iad/hold-ip-10-0-0-1": port TCP/9 is already in use on "10.0.0.1"`, ip: "10.0.0.1"},
		{msg: `Failed to allocate IP for "iad/hold-ip-fd00--1": port TCP/9 is already in use on "fd00::1"`, ip: "fd00::1"},
		{msg: `Failed to allocate IP for "t/web": port TCP/80 is already in use on "10.0.0.1"`},
		{msg: `Failed to allocate IP for "t/web": port UDP/9 is already in use on "10.0.0.1"`},
		{msg: `Failed to allocate IP for "t/web": no available IPs`},
	} {
		names, ip := blamed(tc.msg, "iad")
		g.Expect(names).To(Equal(tc.names), tc.msg)
		if tc.ip == "" {
			g.Expect(ip.IsValid()).To(BeFalse(), tc.msg)
		} else {
			g.Expect(ip).To(Equal(netip.MustParseAddr(tc.ip)), tc.msg)
		}
	}
}
