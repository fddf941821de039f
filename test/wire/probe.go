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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Limits every probe loop keeps, whatever it is asked.
const (
	// MaxProbeDuration bounds one probe series.
	MaxProbeDuration = 2 * time.Minute
	// MaxProbes bounds the probes of one series.
	MaxProbes = 20000
	// MinProbeInterval is the fastest probing allowed (200 Hz).
	MinProbeInterval = 5 * time.Millisecond
)

// Get makes one HTTP request to addr, port 80, from the client, on a fresh
// connection, and returns the body.
func (b *Bed) Get(ctx context.Context, addr netip.Addr, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body string
	err := b.client.Do(func() error {
		d := net.Dialer{}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr.String(), "80"))
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		if dl, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(dl)
		}
		if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufioReader(conn), nil)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		body = strings.TrimSpace(string(raw))
		return nil
	})
	return body, err
}

// WhoHas asks from the client, by one ARP request, who holds addr, and
// returns the nodes that answered within window (an unknown answer is an
// error: nothing but the nodes' speakers may answer).
func (b *Bed) WhoHas(addr netip.Addr, window time.Duration) ([]*Node, error) {
	macs, err := whoHas(b.client, LinkName, ClientAddress, clientMAC, addr, window)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, mac := range macs {
		n := b.nodeByMAC(mac)
		if n == nil {
			return out, fmt.Errorf("%s answered for %s, which is no node's", mac, addr)
		}
		out = append(out, n)
	}
	return out, nil
}

func (b *Bed) nodeByMAC(mac net.HardwareAddr) *Node {
	for _, n := range b.Nodes {
		if n.MAC.String() == mac.String() {
			return n
		}
	}
	return nil
}

// ForgetNeighbours empties the client's ARP cache, as if it had just
// arrived: its next packet to an address asks again who holds it.
func (b *Bed) ForgetNeighbours() error {
	return b.client.ip("neigh", "flush", "dev", LinkName, "nud", "all")
}

// Probe is one request of a series.
type Probe struct {
	// At is when the request started.
	At time.Time
	// Took is how long it took to succeed or fail.
	Took time.Duration
	// Body is what the backend answered; Err why it failed.
	Body string
	Err  error
}

// OK reports whether the probe got an answer.
func (p Probe) OK() bool { return p.Err == nil }

// ProbeOptions shape a series.
type ProbeOptions struct {
	// Interval between the starts of two probes (default 10ms, 100 Hz).
	Interval time.Duration
	// Timeout of each probe (default 200ms).
	Timeout time.Duration
	// Duration bounds the series (default and at most MaxProbeDuration).
	Duration time.Duration
	// Until, when set, ends the series as soon as it returns true; it sees
	// the probes finished so far, in start order.
	Until func(probes []Probe) bool
}

// ProbeSeries requests addr from the client at a fixed rate, each request
// on its own connection and in flight independently, so that a slow failure
// does not slow the rate, until opts.Until says so, ctx ends, or the bounds
// are reached. It returns the probes in start order.
func (b *Bed) ProbeSeries(ctx context.Context, addr netip.Addr, opts ProbeOptions) []Probe {
	if opts.Interval == 0 {
		opts.Interval = 10 * time.Millisecond
	}
	opts.Interval = max(opts.Interval, MinProbeInterval)
	if opts.Timeout <= 0 {
		opts.Timeout = 200 * time.Millisecond
	}
	if opts.Duration <= 0 || opts.Duration > MaxProbeDuration {
		opts.Duration = MaxProbeDuration
	}
	// The series' deadline stops new probes; a probe in flight runs to its
	// own timeout, so the last ones are not cut short.
	probeCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Duration)
	defer cancel()
	type result struct {
		i int
		p Probe
	}
	results := make(chan result, 64)
	var probes []Probe
	var finished []bool
	inFlight := 0
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	start := func() {
		i := len(probes)
		at := time.Now()
		probes = append(probes, Probe{At: at})
		finished = append(finished, false)
		inFlight++
		go func() {
			body, err := b.Get(probeCtx, addr, opts.Timeout)
			if err == nil && body == "" {
				err = errors.New("empty answer")
			}
			results <- result{i, Probe{At: at, Took: time.Since(at), Body: body, Err: err}}
		}()
	}
	// done is the prefix of probes that have all finished.
	done := 0
	stopping := false
	start()
	ended := ctx.Done()
	for inFlight > 0 || !stopping {
		select {
		case r := <-results:
			inFlight--
			probes[r.i], finished[r.i] = r.p, true
			for done < len(probes) && finished[done] {
				done++
			}
			if !stopping && opts.Until != nil && opts.Until(probes[:done]) {
				stopping = true
			}
		case <-tick.C:
			switch {
			case stopping:
			case ctx.Err() != nil || len(probes) >= MaxProbes:
				stopping = true
			default:
				start()
			}
		case <-ended:
			stopping, ended = true, nil
		}
	}
	return probes
}

// Outage summarises a series around one event at time from: the probes that
// failed after from, and how long the address was unreachable: from the
// start of the last success before the first failure, or from if that is
// later, to the start of the first success after the last failure.
type Outage struct {
	Failed   int
	Duration time.Duration
	// Recovered is false when the series ended on a failure.
	Recovered bool
}

// OutageAfter measures the outage of probes that follows from.
func OutageAfter(probes []Probe, from time.Time) Outage {
	var o Outage
	firstFail, lastFail := -1, -1
	for i, p := range probes {
		if p.At.Before(from) || p.OK() {
			continue
		}
		o.Failed++
		if firstFail < 0 {
			firstFail = i
		}
		lastFail = i
	}
	if firstFail < 0 {
		o.Recovered = len(probes) > 0 && probes[len(probes)-1].OK()
		return o
	}
	begin := from
	for i := firstFail - 1; i >= 0; i-- {
		if probes[i].OK() {
			if probes[i].At.After(begin) {
				begin = probes[i].At
			}
			break
		}
	}
	for _, p := range probes[lastFail+1:] {
		if p.OK() {
			o.Duration, o.Recovered = p.At.Sub(begin), true
			return o
		}
	}
	o.Duration = probes[len(probes)-1].At.Sub(begin)
	return o
}

// FirstSuccessAfter returns the first successful probe that started after
// from.
func FirstSuccessAfter(probes []Probe, from time.Time) (Probe, bool) {
	for _, p := range probes {
		if !p.At.Before(from) && p.OK() {
			return p, true
		}
	}
	return Probe{}, false
}

// SucceededFor returns an Until that ends a series once its probes have
// succeeded without a break for d, after at least one failure or event time
// from (zero: from the start).
func SucceededFor(d time.Duration, from func() time.Time) func([]Probe) bool {
	return func(probes []Probe) bool {
		if len(probes) == 0 || !probes[len(probes)-1].OK() {
			return false
		}
		since := time.Time{}
		if from != nil {
			since = from()
			if since.IsZero() {
				return false
			}
		}
		first := len(probes) - 1
		for first > 0 && probes[first-1].OK() {
			first--
		}
		if probes[first].At.Before(since) {
			// No failure since the event: count from the event.
			return probes[len(probes)-1].At.Sub(since) >= d
		}
		return probes[len(probes)-1].At.Sub(probes[first].At) >= d
	}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
