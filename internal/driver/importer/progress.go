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
	"fmt"
	"io"
	"time"
)

// progress writes a line as each wait of a run starts and as it ends, so
// that an admin sees what the run waits for, and for how long at most. The
// command writes it to stderr, apart from the report, which -o json|yaml
// keeps parseable. A nil writer drops the lines.
type progress struct {
	w io.Writer
	// total is the number of waits the run expects; n those begun.
	total, n int
	now      func() time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w, now: time.Now} }

// line writes one line.
func (p *progress) line(format string, args ...any) {
	if p.w != nil {
		_, _ = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// wait says that the run waits, at most timeout, on behalf of subject (a
// Service, a claim) for what; the function it returns says how the wait
// ended.
func (p *progress) wait(subject, what string, timeout time.Duration) (ended func(error)) {
	p.n++
	prefix := fmt.Sprintf("[%d/%d] %s:", p.n, p.total, subject)
	p.line("%s waiting up to %s for %s", prefix, timeout, what)
	began := p.now()
	return func(err error) {
		took := p.now().Sub(began).Round(100 * time.Millisecond)
		if err != nil {
			p.line("%s failed after %s: %v", prefix, took, err)
			return
		}
		p.line("%s done in %s", prefix, took)
	}
}
