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
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report is everything one benchmark run measured.
type Report struct {
	Machine  Machine  `json:"machine"`
	Settings Settings `json:"settings"`
	Sizes    []Size   `json:"sizes"`
	// Wire is the wire scenario, when it was asked for.
	Wire *Wire `json:"wire,omitempty"`
}

// Machine is what the run ran on.
type Machine struct {
	Date      string  `json:"date"`
	Cores     int     `json:"cores"`
	MemoryGiB float64 `json:"memoryGiB"`
	CPU       string  `json:"cpu"`
	Kernel    string  `json:"kernel"`
	Go        string  `json:"go"`
	// LoadAverage is /proc/loadavg when the run started: other work on the
	// machine shares its cores with the benchmark.
	LoadAverage string `json:"loadAverage"`
}

// Settings are the knobs the run used.
type Settings struct {
	// Driver is the driver measured ("metallb", "cilium"); it also keys its
	// allocator's process in each Result's Processes. Allocator names that
	// allocator in the tables ("MetalLB", "Cilium"). Reports written
	// before drivers could be chosen measured MetalLB and carry neither.
	Driver             string  `json:"driver"`
	Allocator          string  `json:"allocator"`
	Workers            int     `json:"workers"`
	QPS                float32 `json:"clientQPS"`
	Burst              int     `json:"clientBurst"`
	ClaimConcurrency   int     `json:"claimConcurrency"`
	AddressConcurrency int     `json:"addressConcurrency"`
	DriverConcurrency  int     `json:"driverConcurrency"`
	// DriverMemoryLimit is the driver's container memory limit; empty: none.
	DriverMemoryLimit string   `json:"driverMemoryLimit,omitempty"`
	CoreArgs          []string `json:"coreArgs"`
	DriverArgs        []string `json:"driverArgs"`
	// Peers names each build of the peer the anchors ran, by anchor.
	Peers map[string]string `json:"peers,omitempty"`
}

// Size is one number of claims: its ceiling and its scenarios.
type Size struct {
	N int `json:"n"`
	// Unrelated is how many plain ClusterIP Services sat in another
	// namespace during this size's scenarios.
	Unrelated int      `json:"unrelatedServices"`
	Ceiling   Ceiling  `json:"ceiling"`
	Scenarios []Result `json:"scenarios"`
	// Comparisons set each product scenario against its anchor.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// Comparison is a product scenario against its anchor at one size.
type Comparison struct {
	Product string `json:"product"`
	Anchor  string `json:"anchor"`
	// Ratio is the product's claims/s ÷ the anchor's claims (or
	// Services)/s; 0 when either did not converge.
	Ratio            float64 `json:"ratio"`
	ProductPerSecond float64 `json:"productPerSecond"`
	AnchorPerSecond  float64 `json:"anchorPerSecond"`
	ProductP50Ms     float64 `json:"productP50Ms"`
	AnchorP50Ms      float64 `json:"anchorP50Ms"`
	// ProductWrites and AnchorWrites are API writes per claim (or Service).
	ProductWrites float64 `json:"productWritesPerClaim"`
	AnchorWrites  float64 `json:"anchorWritesPerClaim"`
	// Target is the smallest ratio the issues ask for (43 for the peers, 14
	// for MetalLB alone), 0 for none.
	Target float64 `json:"target,omitempty"`
}

// anchorTargets are the ratios the issues set: the static path eight times
// the released peer's rate and three times the unthrottled peer's (issue
// 43, at 1,000 and 5,000 claims), the MetalLB path half of MetalLB alone's
// (issue 14). They set none for another allocator.
var anchorTargets = map[string]float64{anchorPeer: 8, anchorPeerUnthrottled: 3, metallbBackend.anchorAlone(): 0.5}

// comparisons pairs every product scenario of the size with each anchor
// beside it (by the scenario's letter), in the order the scenarios ran.
func (s Size) comparisons() []Comparison {
	anchors := map[string][]*Result{}
	for i := range s.Scenarios {
		if letter, ok := anchorBeside[s.Scenarios[i].Scenario]; ok {
			anchors[letter] = append(anchors[letter], &s.Scenarios[i])
		}
	}
	var out []Comparison
	for _, res := range s.Scenarios {
		if _, isAnchor := anchorBeside[res.Scenario]; isAnchor || len(res.Scenario) < 2 || res.Scenario[1] != '-' {
			continue
		}
		for _, a := range anchors[res.Scenario[:1]] {
			c := Comparison{Product: res.Scenario, Anchor: a.Scenario,
				ProductPerSecond: res.PerSecond, AnchorPerSecond: a.PerSecond,
				ProductP50Ms: res.P50Ms, AnchorP50Ms: a.P50Ms,
				ProductWrites: res.WritesPerClaim, AnchorWrites: a.WritesPerClaim,
				Target: anchorTargets[a.Scenario]}
			if res.Converged && a.Converged && a.PerSecond > 0 {
				c.Ratio = res.PerSecond / a.PerSecond
			}
			out = append(out, c)
		}
	}
	return out
}

// Ceiling is the API server's rate for creating and status-updating a
// trivial custom object, with the benchmark's client settings.
type Ceiling struct {
	Objects         int     `json:"objects"`
	Seconds         float64 `json:"seconds"`
	Writes          float64 `json:"writes"`
	WritesPerSecond float64 `json:"writesPerSecond"`
	// APIServerCPUSeconds is the CPU the API server spent meanwhile, so that
	// a scenario's cost per write can be set against the trivial object's.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	// EtcdBytesPerWrite is what etcd received from the API server per
	// write meanwhile; Object is the first object as stored after its
	// status write.
	EtcdBytesPerWrite float64     `json:"etcdBytesPerWrite,omitempty"`
	Object            *ObjectSize `json:"object,omitempty"`
}

// apiServerMsPerWrite is the API server's CPU per write request: of the
// ceiling when res is nil, of the scenario otherwise.
func apiServerMsPerWrite(c Ceiling, res *Result) float64 {
	cpu, writes := c.APIServerCPUSeconds, c.Writes
	if res != nil {
		cpu, writes = res.Processes["kube-apiserver"].CPUSeconds, res.WritesPerClaim*float64(res.N)
	}
	if writes == 0 {
		return 0
	}
	return cpu * 1000 / writes
}

// Result is one scenario at one size.
type Result struct {
	Scenario  string `json:"scenario"`
	N         int    `json:"n"`
	Converged bool   `json:"converged"`
	Error     string `json:"error,omitempty"`
	// Seconds is the wall time from the first write of the scenario to the
	// last observed converged state.
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"claimsPerSecond"`
	P50Ms     float64 `json:"p50Ms"`
	P99Ms     float64 `json:"p99Ms"`
	// Writes are API write requests per claim, from apiserver_request_total,
	// by "VERB resource[/subresource]"; WritesPerClaim is their sum.
	WritesPerClaim float64            `json:"writesPerClaim"`
	Writes         map[string]float64 `json:"writes"`
	// ConflictsPerClaim are the writes among them refused with 409;
	// Conflicts splits them as Writes does.
	ConflictsPerClaim float64            `json:"conflictsPerClaim"`
	Conflicts         map[string]float64 `json:"conflicts,omitempty"`
	// ByClient splits writes per claim by who sent them: the benchmark
	// counts its own, the managers' rest_client_requests_total theirs, and
	// otherClients is the rest (the allocator, whose metrics do not count
	// its requests, kube-controller-manager, the API server itself).
	ByClient map[string]float64 `json:"byClient"`
	// Reconciles and QueueAdds are, per claim, each manager's reconciles and
	// work queue adds by "manager/controller".
	Reconciles map[string]float64 `json:"reconciles"`
	QueueAdds  map[string]float64 `json:"queueAdds"`
	// Events are Events recorded per claim, by "reporter reason" (a series
	// update counts as one).
	Events map[string]float64 `json:"events"`
	// MinWrites is the fewest writes a claim needs on this path (see
	// docs/performance.md); CeilingRatio is claims/s ÷ (ceiling writes/s ÷
	// MinWrites).
	MinWrites    int                  `json:"minWrites"`
	CeilingRatio float64              `json:"ceilingRatio"`
	Processes    map[string]ProcStats `json:"processes"`
	// Stages are per-claim latencies of the steps of the path.
	Stages []Stage `json:"stages,omitempty"`
	// Unheld says how long handoffs left addresses unreported (association
	// and teardown scenarios).
	Unheld *Unheld `json:"unheld,omitempty"`
	// EtcdBytesPerClaim is what etcd received from the API server per
	// claim (every write's stored value and its framing).
	EtcdBytesPerClaim float64 `json:"etcdBytesPerClaim,omitempty"`
	// Objects are the scenario's first claim and its address as stored
	// once it converged.
	Objects []ObjectSize `json:"objects,omitempty"`
}

// Unheld summarises the driver's address_driver_unheld_seconds over a
// scenario.
type Unheld struct {
	// Handoffs is how many handoffs were observed.
	Handoffs float64 `json:"handoffs"`
	// Zero is the share of them that left the address reported throughout.
	Zero float64 `json:"zero"`
	// P99Ms is the upper bound of the histogram bucket holding the 99th
	// percentile (-1 beyond the largest bucket).
	P99Ms float64 `json:"p99Ms"`
}

// ProcStats are a process's memory and CPU during a scenario.
type ProcStats struct {
	// PeakRSSMiB is VmHWM at the end of the scenario; the peak is reset at
	// its start when the kernel allows (PeakSinceStart says it was not).
	PeakRSSMiB     float64 `json:"peakRSSMiB"`
	RSSMiB         float64 `json:"rssMiB"`
	CPUSeconds     float64 `json:"cpuSeconds"`
	PeakSinceStart bool    `json:"peakSinceStart,omitempty"`
	// FileRSSMiB is the part of RSSMiB mapped from files (the binary's own
	// pages, which the kernel can drop and read again).
	FileRSSMiB float64 `json:"fileRSSMiB,omitempty"`
	// LiveHeapMiB is a manager's heap right after a collection at the end
	// of the scenario (with -pprof only): what the process keeps.
	LiveHeapMiB float64 `json:"liveHeapMiB,omitempty"`
	// MemoryLimitMiB is the GOMEMLIMIT a manager's runtime reported
	// (go_gc_gomemlimit_bytes) at the end of the scenario, if it had one.
	MemoryLimitMiB float64 `json:"memoryLimitMiB,omitempty"`
}

// cell is the process's cell in the memory tables: peak MiB / CPU s, and
// the live heap and the memory limit where they were read.
func (ps ProcStats) cell() string {
	c := fmt.Sprintf("%.0f / %.1f", ps.PeakRSSMiB, ps.CPUSeconds)
	var notes []string
	if ps.LiveHeapMiB > 0 {
		notes = append(notes, fmt.Sprintf("live %.0f", ps.LiveHeapMiB))
	}
	if ps.MemoryLimitMiB > 0 {
		notes = append(notes, fmt.Sprintf("limit %.0f", ps.MemoryLimitMiB))
	}
	if len(notes) > 0 {
		c += " (" + strings.Join(notes, ", ") + ")"
	}
	return c
}

// Stage is the latency of one step of a path.
type Stage struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
}

// The processes a scenario measures. Their names key a Result's Processes
// and ByClient, and prefix its Reconciles and QueueAdds.
// The allocator's process is named after the driver (Settings.Driver).
const (
	procBench  = "bench"
	procCore   = "core"
	procDriver = "driver"
)

// notAvailable fills a cell whose process did not run or count.
const notAvailable = "n/a"

// otherClients names the writes no process of ours counted, the allocator
// named in title among them.
func otherClients(title string) string { return title + " and others" }

// allocator is the key of the allocator's process and its name in the
// tables; a report that names neither measured MetalLB.
func (s Settings) allocator() (proc, title string) {
	if s.Driver == "" {
		return metallbBackend.name, metallbBackend.title
	}
	return s.Driver, s.Allocator
}

// Markdown writes the report as the tables docs/performance.md holds.
func (r *Report) Markdown(w io.Writer) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	m := r.Machine
	p("Machine: %d cores, %.0f GiB RAM, %s, Linux %s, %s; %s; load average at start %s\n\n",
		m.Cores, m.MemoryGiB, m.CPU, m.Kernel, m.Go, m.Date, m.LoadAverage)
	s := r.Settings
	memlimit := "no memory limit"
	if s.DriverMemoryLimit != "" {
		memlimit = "memory limit " + s.DriverMemoryLimit
	}
	p("Settings: %d client workers, client QPS %g burst %d (the managers': no client-side limit); "+
		"core --claim-concurrency=%d --address-concurrency=%d; driver --concurrency=%d, %s\n\n",
		s.Workers, s.QPS, s.Burst, s.ClaimConcurrency, s.AddressConcurrency, s.DriverConcurrency, memlimit)
	if s.Driver != "" {
		p("Driver: %s, allocator %s\n\n", s.Driver, s.Allocator)
	}

	if len(r.Sizes) == 0 {
		r.wireMarkdown(p)
		return
	}
	r.ceilingMarkdown(p)
	r.scenariosMarkdown(p)
	r.anchorsMarkdown(p)
	r.memoryMarkdown(p)
	r.apiServerMarkdown(p)
	r.bytesMarkdown(p)
	r.clientsMarkdown(p)
	r.writesMarkdown(p)
	r.reconcilesMarkdown(p)
	r.eventsMarkdown(p)
	r.handoffsMarkdown(p)
	r.stagesMarkdown(p)
	r.wireMarkdown(p)
}

// ceilingMarkdown reports each size's ceiling.
func (r *Report) ceilingMarkdown(p func(format string, args ...any)) {
	p("### Ceiling: create + status-update of a trivial custom object\n\n")
	p("| N | objects | seconds | writes/s | API server CPU ms/write |\n|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Sizes {
		c := run.Ceiling
		p("| %d | %d | %.1f | %.0f | %.2f |\n", run.N, c.Objects, c.Seconds, c.WritesPerSecond, apiServerMsPerWrite(c, nil))
	}
}

// scenariosMarkdown reports every scenario's speed, writes and the cost to
// each process.
func (r *Report) scenariosMarkdown(p func(format string, args ...any)) {
	allocator, title := r.Settings.allocator()
	p("\n### Scenarios\n\n")
	p("| scenario | N | unrelated Services | converged | wall s | claims/s | ms/claim | p50 ms | p99 ms | writes/claim "+
		"| min writes | of ceiling ratio | core peak MiB / CPU s | driver peak MiB / CPU s | %s peak MiB / CPU s "+
		"| API server / etcd / bench CPU s |\n", title)
	p("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			conv := "yes"
			if !res.Converged {
				conv = "**no**: " + res.Error
			}
			msPer := 0.0
			if res.N > 0 {
				msPer = res.Seconds * 1000 / float64(res.N)
			}
			proc := func(name string) string {
				ps, ok := res.Processes[name]
				if !ok {
					return notAvailable
				}
				return ps.cell()
			}
			minWrites, ratio := "–", "–"
			if res.MinWrites > 0 {
				minWrites, ratio = fmt.Sprint(res.MinWrites), fmt.Sprintf("%.0f%%", res.CeilingRatio*100)
			}
			p("| %s | %d | %d | %s | %.1f | %.1f | %.2f | %.0f | %.0f | %.2f | %s | %s | %s | %s | %s "+
				"| %.1f / %.1f / %.1f |\n",
				res.Scenario, res.N, run.Unrelated, conv, res.Seconds, res.PerSecond, msPer, res.P50Ms, res.P99Ms,
				res.WritesPerClaim, minWrites, ratio, proc(procCore), proc(procDriver), proc(allocator),
				res.Processes["kube-apiserver"].CPUSeconds, res.Processes["etcd"].CPUSeconds, res.Processes[procBench].CPUSeconds)
		}
	}
}

// anchorsMarkdown sets each product scenario against its anchor.
func (r *Report) anchorsMarkdown(p func(format string, args ...any)) {
	var some bool
	for _, run := range r.Sizes {
		some = some || len(run.Comparisons) > 0
	}
	if !some {
		return
	}
	p("\n### Against the anchors (same run, same API server, same workers)\n\n")
	for _, name := range slices.Sorted(maps.Keys(r.Settings.Peers)) {
		p("- %s: %s\n", name, r.Settings.Peers[name])
	}
	if len(r.Settings.Peers) > 0 {
		p("\n")
	}
	p("| N | product | anchor | product /s | anchor /s | product ÷ anchor | target | p50 ms product / anchor " +
		"| writes per claim product / anchor |\n|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Sizes {
		for _, c := range run.Comparisons {
			ratio, target := notAvailable, "–"
			if c.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f", c.Ratio)
			}
			if c.Target > 0 {
				target = fmt.Sprintf("≥ %g", c.Target)
			}
			p("| %d | %s | %s | %.1f | %.1f | %s | %s | %.0f / %.0f | %.2f / %.2f |\n", run.N, c.Product, c.Anchor,
				c.ProductPerSecond, c.AnchorPerSecond, ratio, target, c.ProductP50Ms, c.AnchorP50Ms,
				c.ProductWrites, c.AnchorWrites)
		}
	}
}

// memoryProcesses are the processes the memory table shows, in order,
// allocator the allocator's.
func memoryProcesses(allocator string) []string {
	return []string{procCore, procDriver, allocator, anchorPeer, anchorPeerUnthrottled, "kube-apiserver", "etcd", procBench}
}

// memoryMarkdown shows every process's peak memory and CPU side by side,
// for the product's scenarios and the anchors alike.
func (r *Report) memoryMarkdown(p func(format string, args ...any)) {
	allocator, _ := r.Settings.allocator()
	memoryProcesses := memoryProcesses(allocator)
	p("\n### Memory and CPU of each process: peak MiB / CPU s, a manager's live heap MiB with -pprof (n/a: not running)\n\n")
	p("| scenario | N | %s |\n|---|---:|%s\n", strings.Join(memoryProcesses, " | "),
		strings.Repeat("---:|", len(memoryProcesses)))
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			cells := make([]string, len(memoryProcesses))
			for i, name := range memoryProcesses {
				cells[i] = notAvailable
				if ps, ok := res.Processes[name]; ok {
					cells[i] = ps.cell()
				}
			}
			p("| %s | %d | %s |\n", res.Scenario, res.N, strings.Join(cells, " | "))
		}
	}
}

// apiServerMarkdown sets the API server's CPU per write of each scenario
// against its size's ceiling.
func (r *Report) apiServerMarkdown(p func(format string, args ...any)) {
	p("\n### API server CPU per write\n\n")
	p("| scenario | N | ms/write | × the ceiling's |\n|---|---:|---:|---:|\n")
	for _, run := range r.Sizes {
		base := apiServerMsPerWrite(run.Ceiling, nil)
		for i := range run.Scenarios {
			res := &run.Scenarios[i]
			ms, times := apiServerMsPerWrite(run.Ceiling, res), 0.0
			if base > 0 {
				times = ms / base
			}
			p("| %s | %d | %.2f | %.1f |\n", res.Scenario, res.N, ms, times)
		}
	}
}

// bytesMarkdown shows, for each scenario that read its objects, each
// object's size as stored, the writes that stored it again, and what etcd
// received per claim and per write, beside the API server's CPU per write,
// with the ceiling's trivial object on top.
func (r *Report) bytesMarkdown(p func(format string, args ...any)) {
	var some bool
	for _, run := range r.Sizes {
		some = some || run.Ceiling.Object != nil
		for _, res := range run.Scenarios {
			some = some || len(res.Objects) > 0
		}
	}
	if !some {
		return
	}
	p("\n### Bytes per object (as stored, with managed fields) and per write\n\n")
	p("| scenario | N | object | JSON bytes | of which managedFields (entries) | etcd value bytes | writes of it per claim " +
		"| etcd bytes received per claim | per write | API server CPU ms/write | × the ceiling's |\n" +
		"|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	cell := func(o ObjectSize) string {
		return fmt.Sprintf("%s | %d | %d (%d) | %d", o.Kind, o.Bytes, o.ManagedFieldsBytes, o.Managers, o.StoredBytes)
	}
	for _, run := range r.Sizes {
		c := run.Ceiling
		base := apiServerMsPerWrite(c, nil)
		if c.Object != nil {
			p("| ceiling | %d | %s | 2.00 | %.0f | %.0f | %.2f | 1.0 |\n", run.N, cell(*c.Object), 2*c.EtcdBytesPerWrite,
				c.EtcdBytesPerWrite, base)
		}
		for i := range run.Scenarios {
			res := &run.Scenarios[i]
			if len(res.Objects) == 0 {
				continue
			}
			ms, times, perWrite := apiServerMsPerWrite(c, res), 0.0, 0.0
			if base > 0 {
				times = ms / base
			}
			if res.WritesPerClaim > 0 {
				perWrite = res.EtcdBytesPerClaim / res.WritesPerClaim
			}
			for j, o := range res.Objects {
				if j == 0 {
					p("| %s | %d | %s | %.2f | %.0f | %.0f | %.2f | %.1f |\n", res.Scenario, res.N, cell(o),
						writesOf(res, o.Resource), res.EtcdBytesPerClaim, perWrite, ms, times)
					continue
				}
				p("| | | %s | %.2f | | | | |\n", cell(o), writesOf(res, o.Resource))
			}
		}
	}
}

// writesOf sums a scenario's writes per claim to resource, its
// subresources included.
func writesOf(res *Result, resource string) float64 {
	var t float64
	for k, v := range res.Writes {
		_, target, _ := strings.Cut(k, " ")
		if r, _, _ := strings.Cut(target, "/"); r == resource {
			t += v
		}
	}
	return t
}

// clientsMarkdown splits each scenario's writes by the client that sent them.
func (r *Report) clientsMarkdown(p func(format string, args ...any)) {
	p("\n### Writes per claim by client\n\n")
	_, title := r.Settings.allocator()
	clients := []string{procBench, procCore, procDriver, anchorPeer, anchorPeerUnthrottled, otherClients(title)}
	p("| scenario | N | %s | of which 409 Conflict |\n|---|---:|%s---:|\n",
		strings.Join(clients, " | "), strings.Repeat("---:|", len(clients)))
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			cells := make([]string, len(clients))
			for i, c := range clients {
				if v, ok := res.ByClient[c]; ok {
					cells[i] = fmt.Sprintf("%.2f", v)
				} else {
					cells[i] = notAvailable
				}
			}
			p("| %s | %d | %s | %.2f |\n", res.Scenario, res.N, strings.Join(cells, " | "), res.ConflictsPerClaim)
		}
	}
}

// writesMarkdown reports, one table per size, each scenario's writes by verb
// and resource.
func (r *Report) writesMarkdown(p func(format string, args ...any)) {
	for _, run := range r.Sizes {
		p("\n### Writes per claim by verb and resource, N=%d (of which refused with 409, in brackets)\n\n", run.N)
		kinds := map[string]bool{}
		for _, res := range run.Scenarios {
			for k := range res.Writes {
				kinds[k] = true
			}
		}
		sorted := slices.Sorted(maps.Keys(kinds))
		names := make([]string, len(run.Scenarios))
		for i, res := range run.Scenarios {
			names[i] = res.Scenario
		}
		p("| verb resource | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---:|", len(names)))
		for _, k := range sorted {
			cells := make([]string, len(run.Scenarios))
			for i, res := range run.Scenarios {
				cells[i] = ""
				if v := res.Writes[k]; v >= 0.005 {
					cells[i] = fmt.Sprintf("%.2f", v)
					if c := res.Conflicts[k]; c >= 0.005 {
						cells[i] += fmt.Sprintf(" (%.2f)", c)
					}
				}
			}
			p("| %s | %s |\n", k, strings.Join(cells, " | "))
		}
	}
}

// reconcilesMarkdown reports each scenario's reconciles and work queue adds.
func (r *Report) reconcilesMarkdown(p func(format string, args ...any)) {
	p("\n### Reconciles and work queue adds per claim, by manager and controller\n\n")
	p("| scenario | N | reconciles | queue adds |\n|---|---:|---|---|\n")
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			p("| %s | %d | %s | %s |\n", res.Scenario, res.N, perKey(res.Reconciles), perKey(res.QueueAdds))
		}
	}
}

// eventsMarkdown reports each scenario's Events.
func (r *Report) eventsMarkdown(p func(format string, args ...any)) {
	p("\n### Events per claim by reporter and reason\n\n")
	p("| scenario | N | events |\n|---|---:|---|\n")
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			p("| %s | %d | %s |\n", res.Scenario, res.N, perKey(res.Events))
		}
	}
}

// handoffsMarkdown reports how long handoffs left addresses unreported, in
// the scenarios that made any.
func (r *Report) handoffsMarkdown(p func(format string, args ...any)) {
	_, title := r.Settings.allocator()
	p("\n### Handoffs: how long addresses went unreported\n\n")
	p("| scenario | N | handoffs | unreported never | p99 ms (bucket bound) | %s AllocationFailed events/claim |\n"+
		"|---|---:|---:|---:|---:|---:|\n", title)
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			if u := res.Unheld; u != nil {
				failed := 0.0
				for k, v := range res.Events {
					if strings.HasSuffix(k, " AllocationFailed") {
						failed += v
					}
				}
				p("| %s | %d | %.0f | %.1f%% | %.0f | %.3f |\n", res.Scenario, res.N, u.Handoffs, u.Zero*100, u.P99Ms, failed)
			}
		}
	}
}

// stagesMarkdown reports the latency of each step of the driver's paths.
func (r *Report) stagesMarkdown(p func(format string, args ...any)) {
	_, title := r.Settings.allocator()
	p("\n### Stages of the %s paths (per claim)\n\n", title)
	p("| scenario | N | stage | count | p50 ms | p99 ms |\n|---|---:|---|---:|---:|---:|\n")
	for _, run := range r.Sizes {
		for _, res := range run.Scenarios {
			for _, st := range res.Stages {
				p("| %s | %d | %s | %d | %.0f | %.0f |\n", res.Scenario, res.N, st.Name, st.Count, st.P50Ms, st.P99Ms)
			}
		}
	}
}

// wireMarkdown reports the wire scenario.
func (r *Report) wireMarkdown(p func(format string, args ...any)) {
	w := r.Wire
	if w == nil {
		return
	}
	p("\n### Wire: a client on the bridge, probing at 100 Hz (%d rebuilds)\n\n", w.Rebuilds)
	if w.Skipped != "" {
		p("Skipped: %s.\n", w.Skipped)
		return
	}
	if w.Error != "" {
		p("Failed: %s.\n\n", w.Error)
	}
	p("| measure | samples | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n")
	for _, row := range []struct {
		name string
		v    Percentiles
	}{
		{"time from Service creation to first answer, ms", w.FirstAnswerMs},
		{"rebuild outage, ms", w.OutageMs},
		{"rebuild outage, failed probes", w.FailedProbes},
	} {
		p("| %s | %d | %.0f | %.0f | %.0f | %.0f |\n", row.name, row.v.N, row.v.P50, row.v.P90, row.v.P99, row.v.Max)
	}
	p("\n%.0f probes/s achieved; %d rebuilds not recovered; %.0f s in all.\n", w.ProbesPerSec, w.Unrecovered, w.ScenarioWallS)
}

// perKey lists a per-claim breakdown in key order, leaving out what rounds
// to zero.
func perKey(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]))
		}
	}
	return strings.Join(parts, "; ")
}
