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
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets feed the parsers arbitrary text: the plain test run
// replays the seeds here and in testdata/fuzz, make test fuzzes each for a
// few seconds and make fuzz for longer. No input may panic, every refusal
// must quote what it refuses, and everything accepted must survive a round
// trip through its canonical text.

var rangeSeeds = []string{
	"203.0.113.0/24", "2001:db8::/120", "198.51.100.10-198.51.100.20", " 10.0.0.1 - 10.0.0.9 ",
	"10.0.0.0/33", "10.0.0.1/24", "10.0.0.9-10.0.0.1", "10.0.0.1-2001:db8::1", "10.0.0.1-10.0.0.2-10.0.0.3",
	"::ffff:10.0.0.1/128", "fe80::1%eth0/64", "10.0.0.0/024", "10.0.0.0/-1", "10.0.0.1", "", " ", "-", "/",
	"10.0.0.0/24-10.0.1.0/24", "0.0.0.0/0", "::/0", "010.0.0.1-10.0.0.2", "1.2.3.4-", "-1.2.3.4", "1.2.3.4/",
}

func FuzzParseRange(f *testing.F) {
	for _, s := range rangeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, parse := range map[string]func(string) (Range, error){"ParseRange": ParseRange, "ParseRangeLenient": ParseRangeLenient} {
			r, err := parse(s)
			if err != nil {
				checkRefusal(t, name, s, err, "the range is empty")
				continue
			}
			if !r.First.IsValid() || !r.Last.IsValid() || r.First.Is4() != r.Last.Is4() || r.Last.Less(r.First) {
				t.Fatalf("%s(%q) = %v: not an ordered range of one family", name, s, r)
			}
			if r.First.Zone() != "" || r.Last.Zone() != "" || r.First.Is4In6() || r.Last.Is4In6() {
				t.Fatalf("%s(%q) = %v: zones and IPv4-mapped addresses must be refused", name, s, r)
			}
			if !r.Contains(r.First) || !r.Contains(r.Last) || !r.Overlaps(r) {
				t.Fatalf("%s(%q) = %v: does not contain its own ends", name, s, r)
			}
			back, err := ParseRange(r.String())
			if err != nil || back != r {
				t.Fatalf("%s(%q) = %v, whose text %q parses back to %v, %v", name, s, r, r.String(), back, err)
			}
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"203.0.113.7", "2001:db8::7", "::ffff:1.2.3.4", "2001:db8::", "010.0.0.1", "fe80::1%eth0",
		"10.0.0.0/8", "", "1.2.3", "::", "1:2:3:4:5:6:7:8:9", "256.0.0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			checkRefusal(t, "ParseAddress", s, err, "the address is empty")
			return
		}
		if a.Zone() != "" {
			t.Fatalf("ParseAddress(%q) = %v: zones must be refused", s, a)
		}
		if back, err := ParseAddress(a.String()); err != nil || back != a {
			t.Fatalf("ParseAddress(%q) = %v, whose text parses back to %v, %v", s, a, back, err)
		}
		name := ObjectName(a)
		if len(name) > 253 || strings.HasSuffix(name, "-") || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Fatalf("ObjectName(%v) = %q: not a DNS-1123 subdomain", a, name)
		}
	})
}

// checkRefusal fails unless err refuses s with a message that quotes it; only
// blank input may get the fixed message blank.
func checkRefusal(t *testing.T, fn, s string, err error, blank string) {
	t.Helper()
	msg := err.Error()
	switch {
	case msg == "":
		t.Fatalf("%s(%q): empty error message", fn, s)
	case strings.TrimSpace(s) == "" || s == "":
		if msg != blank && !strings.Contains(msg, strconv.Quote(s)) {
			t.Fatalf("%s(%q) = %q: a blank input's refusal must say so", fn, s, msg)
		}
	case !strings.Contains(msg, strconv.Quote(s)):
		t.Fatalf("%s(%q) = %q: the refusal does not quote the input", fn, s, msg)
	}
}
