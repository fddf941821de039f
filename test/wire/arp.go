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
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// arpPacketLen is the length of an ARP packet for IPv4 over Ethernet.
const arpPacketLen = 28

// ARP operations.
const (
	arpRequest = 1
	arpReply   = 2
)

var broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// whoHas broadcasts one ARP request for target from the interface ifname of
// namespace n (whose own address and MAC are src and srcMAC), and returns
// every distinct hardware address that answered within window, in the order
// they answered. An empty answer means nobody claims the address.
func whoHas(n *namespace, ifname string, src netip.Addr, srcMAC net.HardwareAddr, target netip.Addr, window time.Duration) ([]net.HardwareAddr, error) {
	var macs []net.HardwareAddr
	err := n.Do(func() error {
		ifi, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		proto := htons(unix.ETH_P_ARP)
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return fmt.Errorf("opening a packet socket: %w", err)
		}
		defer func() { _ = unix.Close(fd) }()
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index}); err != nil {
			return err
		}
		to := &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index, Halen: 6}
		copy(to.Addr[:], broadcastMAC)
		if err := unix.Sendto(fd, arpPacket(arpRequest, srcMAC, src, nil, target), 0, to); err != nil {
			return fmt.Errorf("sending an ARP request: %w", err)
		}
		deadline := time.Now().Add(window)
		buf := make([]byte, 128)
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return nil
			}
			tv := unix.NsecToTimeval(left.Nanoseconds())
			if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				return err
			}
			k, _, err := unix.Recvfrom(fd, buf, 0)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return err
			}
			if mac, ok := replyFrom(buf[:k], target); ok && !slices.ContainsFunc(macs, func(m net.HardwareAddr) bool { return bytes.Equal(m, mac) }) {
				macs = append(macs, mac)
			}
		}
	})
	return macs, err
}

// arpPacket encodes an ARP packet for IPv4 over Ethernet.
func arpPacket(op uint16, sha net.HardwareAddr, spa netip.Addr, tha net.HardwareAddr, tpa netip.Addr) []byte {
	p := make([]byte, arpPacketLen)
	binary.BigEndian.PutUint16(p[0:], 1)      // Ethernet
	binary.BigEndian.PutUint16(p[2:], 0x0800) // IPv4
	p[4], p[5] = 6, 4
	binary.BigEndian.PutUint16(p[6:], op)
	copy(p[8:14], sha)
	s := spa.As4()
	copy(p[14:18], s[:])
	copy(p[18:24], tha)
	t := tpa.As4()
	copy(p[24:28], t[:])
	return p
}

// replyFrom returns the sender's hardware address if p is an ARP reply
// whose sender protocol address is target.
func replyFrom(p []byte, target netip.Addr) (net.HardwareAddr, bool) {
	if len(p) < arpPacketLen || binary.BigEndian.Uint16(p[6:]) != arpReply || p[4] != 6 || p[5] != 4 {
		return nil, false
	}
	spa, _ := netip.AddrFromSlice(p[14:18])
	if spa != target.Unmap() {
		return nil, false
	}
	return net.HardwareAddr(slices.Clone(p[8:14])), true
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
