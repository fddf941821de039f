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
	"errors"
	"testing"
	"time"
)

// series builds probes 10ms apart from a pattern: '+' answered, '-' failed.
func series(t0 time.Time, pattern string) []Probe {
	ps := make([]Probe, 0, len(pattern))
	for i, c := range pattern {
		p := Probe{At: t0.Add(time.Duration(i) * 10 * time.Millisecond), Body: "web"}
		if c == '-' {
			p.Body, p.Err = "", errors.New("refused")
		}
		ps = append(ps, p)
	}
	return ps
}

func TestOutageAfter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 10 * time.Millisecond) }
	for _, tc := range []struct {
		name    string
		pattern string
		from    time.Time
		want    Outage
	}{
		{"no failure", "++++", at(1), Outage{Recovered: true}},
		{"one gap, counted from the event", "++---++", at(2), Outage{Failed: 3, Duration: 30 * time.Millisecond, Recovered: true}},
		{"one gap, from the last success", "++---++", at(1), Outage{Failed: 3, Duration: 40 * time.Millisecond, Recovered: true}},
		{"failures before the event do not count", "--++---++", at(3), Outage{Failed: 3, Duration: 40 * time.Millisecond, Recovered: true}},
		{"two gaps span from the first to the last", "+-+--+", at(0), Outage{Failed: 3, Duration: 50 * time.Millisecond, Recovered: true}},
		{"no success before: from the event", "---+", at(0), Outage{Failed: 3, Duration: 30 * time.Millisecond, Recovered: true}},
		{"never recovered", "++---", at(0), Outage{Failed: 3, Duration: 30 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OutageAfter(series(t0, tc.pattern), tc.from); got != tc.want {
				t.Errorf("OutageAfter(%q) = %+v, want %+v", tc.pattern, got, tc.want)
			}
		})
	}
}

func TestFirstSuccessAfter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ps := series(t0, "+--+")
	p, ok := FirstSuccessAfter(ps, t0.Add(5*time.Millisecond))
	if !ok || !p.At.Equal(t0.Add(30*time.Millisecond)) {
		t.Fatalf("FirstSuccessAfter = %v, %v; want the probe at 30ms", p.At.Sub(t0), ok)
	}
	if _, ok := FirstSuccessAfter(series(t0, "+--"), t0.Add(5*time.Millisecond)); ok {
		t.Fatal("found a success where there is none")
	}
}
