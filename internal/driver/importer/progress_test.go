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

package importer

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &out, total: 2, now: func() time.Time { return clock }}
	ended := p.wait("Service a/web", "IPAddressClaim a/web to be Bound", time.Minute)
	clock = clock.Add(1234 * time.Millisecond)
	ended(nil)
	ended = p.wait("Service b/db", "IPAddressClaim b/db to be Bound", time.Minute)
	clock = clock.Add(time.Minute)
	ended(errors.New("not Bound in time"))
	want := "[1/2] Service a/web: waiting up to 1m0s for IPAddressClaim a/web to be Bound\n" +
		"[1/2] Service a/web: done in 1.2s\n" +
		"[2/2] Service b/db: waiting up to 1m0s for IPAddressClaim b/db to be Bound\n" +
		"[2/2] Service b/db: failed after 1m0s: not Bound in time\n"
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
	// Without a writer, nothing is written and nothing fails.
	(&progress{now: time.Now}).wait("Service a/web", "anything", time.Second)(nil)
}
