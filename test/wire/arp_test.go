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

package wire

import (
	"net"
	"net/netip"
	"testing"
)

func TestARPPacketRoundTrip(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0, 0xc0, 0, 0x02, 0x81}
	target := netip.MustParseAddr("198.51.100.193")
	reply := arpPacket(arpReply, mac, target, broadcastMAC, netip.MustParseAddr("192.0.2.254"))
	got, ok := replyFrom(reply, target)
	if !ok || got.String() != mac.String() {
		t.Fatalf("replyFrom(reply) = %v, %v; want %v, true", got, ok, mac)
	}
	if _, ok := replyFrom(reply, netip.MustParseAddr("198.51.100.194")); ok {
		t.Fatal("a reply for another address was taken as an answer")
	}
	request := arpPacket(arpRequest, mac, target, nil, netip.MustParseAddr("192.0.2.254"))
	if _, ok := replyFrom(request, target); ok {
		t.Fatal("a request was taken as an answer")
	}
	if _, ok := replyFrom(reply[:20], target); ok {
		t.Fatal("a truncated packet was taken as an answer")
	}
}

func TestDocumentationOnly(t *testing.T) {
	for p, want := range map[string]bool{
		"198.51.100.192/26": true,
		"203.0.113.0/24":    true,
		"192.0.2.0/23":      false,
		"10.0.0.0/8":        false,
		"2001:db8:1::/48":   true,
		"2001:db9::/32":     false,
	} {
		if got := documentation(netip.MustParsePrefix(p)); got != want {
			t.Errorf("documentation(%s) = %v, want %v", p, got, want)
		}
	}
}
