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

package main

import (
	"strings"
	"testing"
)

// TestRead adds up a run of two packages, one with a failing test, as go
// test -json streams it.
func TestRead(t *testing.T) {
	const run = `{"Action":"run","Package":"m/a","Test":"TestSlow"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"    a_test.go:9: quiet\n"}
{"Action":"pass","Package":"m/a","Test":"TestSlow","Elapsed":12.5}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t12.6s\n"}
{"Action":"pass","Package":"m/a","Elapsed":12.6}
{"Action":"output","Package":"m/d","Output":"test slot: waited 20.0s\n"}
{"Action":"output","Package":"m/d","Output":"ok  \tm/d\t25.0s\n"}
{"Action":"pass","Package":"m/d","Elapsed":25}
{"Action":"run","Package":"m/b","Test":"TestBroken"}
{"Action":"output","Package":"m/b","Test":"TestBroken","Output":"    b_test.go:3: want 1, got 2\n"}
{"Action":"run","Package":"m/b","Test":"TestBroken/sub"}
{"Action":"pass","Package":"m/b","Test":"TestBroken/sub","Elapsed":30}
{"Action":"fail","Package":"m/b","Test":"TestBroken","Elapsed":31}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t31.2s\n"}
{"Action":"fail","Package":"m/b","Elapsed":31.2}
{"Action":"run","Package":"m/c","Test":"TestE2E"}
{"Action":"output","Package":"m/c","Test":"TestE2E","Output":"refused a flag\n"}
{"Action":"output","Package":"m/c","Output":"FAIL\tm/c\t0.2s\n"}
{"Action":"fail","Package":"m/c","Elapsed":0.2}
`
	var out strings.Builder
	r, err := read(strings.NewReader(run), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Failed {
		t.Error("a failed test fails the run")
	}
	echoed := out.String()
	for _, want := range []string{"ok  \tm/a", "want 1, got 2", "FAIL\tm/b", "refused a flag"} {
		if !strings.Contains(echoed, want) {
			t.Errorf("echo lacks %q:\n%s", want, echoed)
		}
	}
	if strings.Contains(echoed, "quiet") {
		t.Errorf("a passing test's output is not echoed:\n%s", echoed)
	}
	var times strings.Builder
	r.print(&times, 1)
	got := times.String()
	if !strings.Contains(got, "31.2s  fail  m/b\n      12.6s  pass  m/a\n       5.0s  pass  m/d (and 20.0s waiting)\n") {
		t.Errorf("packages, longest first, without the wait for a slot:\n%s", got)
	}
	if !strings.Contains(got, "49.0s  in all, over 4 packages (and 20.0s waiting for a slot)") {
		t.Errorf("the total leaves the wait out:\n%s", got)
	}
	if !strings.Contains(got, "31.0s  fail  m/b.TestBroken\n") || strings.Contains(got, "TestSlow") || strings.Contains(got, "/sub") {
		t.Errorf("the one slowest top-level test:\n%s", got)
	}
}
