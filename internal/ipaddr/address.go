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

package ipaddr

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseAddress parses exactly one IPv4 or IPv6 address in any text form
// netip accepts, except that zones and prefixes are refused: an address in
// the ledger names a global address, never an interface-scoped one.
// IPv4 with leading zeros ("010.0.0.1") is refused because its meaning is
// ambiguous (octal to some tools). An IPv4-mapped IPv6 address is kept as
// IPv6, not unmapped.
func ParseAddress(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, errors.New("the address is empty")
	}
	if strings.Contains(s, "/") {
		return netip.Addr{}, fmt.Errorf("%q is a prefix, not a single address", s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address: %s", s, addrReason(s, err))
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q has a zone (%%%s); zones are not allowed", s, a.Zone())
	}
	return a, nil
}

// addrReason is netip's explanation without its "ParseAddr(...)" wrapper,
// which would repeat the input our own message already quotes.
func addrReason(s string, err error) string {
	return strings.TrimPrefix(err.Error(), "ParseAddr("+strconv.Quote(s)+"): ")
}

// ObjectName is the name of the IPAddress object for a: "ip-" followed by the
// address's canonical text with ':' and '.' turned into '-'
// (203.0.113.7 → ip-203-0-113-7, 2001:db8::7 → ip-2001-db8--7).
//
// Two adjustments keep the mapping injective and the result a DNS-1123
// subdomain. Text ending in "::" gets a trailing "0" (2001:db8:: →
// ip-2001-db8--0), since a name may not end in '-' and no canonical text ends
// in "::0". An IPv4-mapped address is written with hex groups (::ffff:102:304
// rather than ::ffff:1.2.3.4), which would otherwise collide with
// ::ffff:1:2:3:4. Any zone is dropped.
func ObjectName(a netip.Addr) string {
	a = a.WithZone("")
	text := a.String()
	if a.Is4In6() {
		v4 := a.Unmap().As4()
		text = fmt.Sprintf("::ffff:%x:%x", uint16(v4[0])<<8|uint16(v4[1]), uint16(v4[2])<<8|uint16(v4[3]))
	}
	name := "ip-" + strings.NewReplacer(":", "-", ".", "-").Replace(text)
	if strings.HasSuffix(name, "-") {
		name += "0"
	}
	return name
}
