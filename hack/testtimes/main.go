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

// Command testtimes reads `go test -json` and says how long each package
// and the slowest tests took. Fed the stream as it comes, it also prints
// what plain `go test` would: each package's result line, and the output
// of every test that failed. It exits 1 if anything failed.
//
//	go test -json ./... | tee test-report.json | go run ./hack/testtimes
//	go run ./hack/testtimes -quiet < test-report.json
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cozystack/address-controller/test/slot"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// actionFail is the Action of a test or package that failed, and the
// Result this program gives it.
const actionFail = "fail"

// timing is how long a package or a test ran, and how it ended. A
// package's Elapsed leaves out the time it Waited for a test slot
// (test/slot) before it could start its work.
type timing struct {
	Name    string
	Elapsed time.Duration
	Waited  time.Duration
	Result  string
}

// report is what a stream of events added up to.
type report struct {
	Packages []timing
	Tests    []timing
	Failed   bool
}

func main() {
	quiet := flag.Bool("quiet", false, "print only the times, not the tests' results and failures")
	slowest := flag.Int("slowest", 20, "how many of the slowest tests to list")
	flag.Parse()
	out := io.Writer(os.Stdout)
	if *quiet {
		out = io.Discard
	}
	r, err := read(os.Stdin, out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(2)
	}
	r.print(os.Stdout, *slowest)
	if r.Failed {
		os.Exit(1)
	}
}

// read adds up the events of in, echoing to out what plain go test prints.
func read(in io.Reader, out io.Writer) (*report, error) {
	r := &report{}
	// Output of each running test (and of each package outside its tests),
	// printed only if it fails.
	pending := map[string][]string{}
	waited := map[string]time.Duration{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: the go command's own words (a build error).
			_, _ = fmt.Fprintln(out, string(line))
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output", "build-output":
			if d, ok := waitedFor(e.Output); ok {
				waited[e.Package] += d
			}
			if e.Test == "" && isResultLine(e.Output) {
				_, _ = fmt.Fprint(out, e.Output)
				continue
			}
			pending[key] = append(pending[key], e.Output)
		case "pass", actionFail, "skip":
			d := time.Duration(e.Elapsed * float64(time.Second))
			if e.Action == actionFail {
				r.Failed = true
				_, _ = fmt.Fprint(out, strings.Join(pending[key], ""))
				if e.Test == "" {
					// Tests that never ended: the package exited under them.
					flush(out, pending, e.Package)
				}
			}
			delete(pending, key)
			switch {
			case e.Test == "":
				w := waited[e.Package]
				r.Packages = append(r.Packages, timing{e.Package, d - w, w, e.Action})
			case !strings.Contains(e.Test, "/"):
				r.Tests = append(r.Tests, timing{Name: short(e.Package) + "." + e.Test, Elapsed: d, Result: e.Action})
			}
		case "build-fail":
			r.Failed = true
			_, _ = fmt.Fprint(out, strings.Join(pending[key], ""))
			delete(pending, key)
		}
	}
	return r, sc.Err()
}

// flush prints and forgets the output of every test of pkg still running.
func flush(out io.Writer, pending map[string][]string, pkg string) {
	keys := slices.Sorted(maps.Keys(pending))
	for _, k := range keys {
		if strings.HasPrefix(k, pkg+" ") {
			_, _ = fmt.Fprint(out, strings.Join(pending[k], ""))
			delete(pending, k)
		}
	}
}

// waitedFor reads the line test/slot prints when a package waited for a
// slot.
func waitedFor(line string) (time.Duration, bool) {
	rest, ok := strings.CutPrefix(line, slot.WaitedPrefix)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(rest))
	return d, err == nil
}

// isResultLine says whether a package's output line is its summary ("ok",
// "FAIL", "?", coverage), which go test prints whatever happened.
func isResultLine(s string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t", "--- FAIL", "FAIL\n", "PASS\n"} {
		if strings.HasPrefix(s, p) {
			return !strings.HasPrefix(s, "PASS")
		}
	}
	return false
}

// short drops the module path from a package's import path.
func short(pkg string) string {
	const module = "github.com/cozystack/address-controller/"
	return strings.TrimPrefix(pkg, module)
}

// print writes the package times, longest first, and the n slowest tests.
func (r *report) print(w io.Writer, n int) {
	longest := func(a, b timing) int {
		return cmp.Or(cmp.Compare(b.Elapsed, a.Elapsed), strings.Compare(a.Name, b.Name))
	}
	packages := slices.Clone(r.Packages)
	slices.SortFunc(packages, longest)
	var total, waited time.Duration
	_, _ = fmt.Fprintln(w, "\npackage times (longest first), not counting the wait for a test slot:")
	for _, p := range packages {
		if p.Elapsed > 0 || p.Result == actionFail {
			_, _ = fmt.Fprintf(w, "  %8.1fs  %-4s  %s", p.Elapsed.Seconds(), p.Result, short(p.Name))
			if p.Waited > 0 {
				_, _ = fmt.Fprintf(w, " (and %.1fs waiting)", p.Waited.Seconds())
			}
			_, _ = fmt.Fprintln(w)
		}
		total += p.Elapsed
		waited += p.Waited
	}
	_, _ = fmt.Fprintf(w, "  %8.1fs  in all, over %d packages (and %.1fs waiting for a slot)\n", total.Seconds(), len(packages), waited.Seconds())
	tests := slices.Clone(r.Tests)
	slices.SortFunc(tests, longest)
	_, _ = fmt.Fprintf(w, "\nthe %d slowest tests:\n", min(n, len(tests)))
	for _, t := range tests[:min(n, len(tests))] {
		_, _ = fmt.Fprintf(w, "  %8.1fs  %-4s  %s\n", t.Elapsed.Seconds(), t.Result, t.Name)
	}
}
