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
	"fmt"
	"net/netip"
	"testing"
	"time"
)

func TestRefusedKeepsTheLatestInOrder(t *testing.T) {
	b := &Bed{proxier: &proxier{}}
	to := netip.MustParseAddrPort("198.51.100.200:80")
	for i := range maxRefusals + 10 {
		b.proxier.refused(Refusal{Node: "a", To: to, Why: fmt.Sprint(i)})
	}
	all := b.Refused(time.Time{})
	if len(all) > maxRefusals {
		t.Fatalf("kept %d refusals, want at most %d", len(all), maxRefusals)
	}
	if last := all[len(all)-1].Why; last != fmt.Sprint(maxRefusals+9) {
		t.Fatalf("the newest refusal kept is %s, want %d", last, maxRefusals+9)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) {
			t.Fatalf("refusal %d at %s comes before the one it follows, at %s", i, all[i].At, all[i-1].At)
		}
	}

	from := time.Now()
	b.proxier.refused(Refusal{Node: "b", To: to, Why: "after"})
	got := b.Refused(from)
	if len(got) != 1 || got[0].Why != "after" || got[0].Node != "b" {
		t.Fatalf("Refused(from) = %+v, want only the refusal made after from", got)
	}
}
