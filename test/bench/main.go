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
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/test/runkit"
)

func main() {
	var (
		sizes = flag.String("n", "100,1000,10000", "Comma-separated numbers of claims, measured in this order.")
		out   = flag.String("out", "bin/bench.json", "Where to write the JSON report.")
		cfg   = Config{Log: runkit.Logf}
		qps   float64
	)
	flag.StringVar(&cfg.Driver, "driver", defaultDriver,
		"The driver measured, with its allocator: "+strings.Join(driverNames(), " or ")+
			" (the path b, its anchors and the report are named after it).")
	flag.IntVar(&cfg.Workers, "workers", 16,
		"Requests the benchmark's client keeps in flight when it creates or deletes objects.")
	flag.Float64Var(&qps, "qps", -1,
		"Client-side QPS of the benchmark's client; negative turns the limit off, "+
			"as controller-runtime does for the managers.")
	flag.IntVar(&cfg.Burst, "burst", 0, "Client-side burst of the benchmark's client (with -qps > 0).")
	flag.IntVar(&cfg.ClaimConcurrency, "claim-concurrency", 4, "The core's --claim-concurrency.")
	flag.IntVar(&cfg.AddressConcurrency, "address-concurrency", 4, "The core's --address-concurrency.")
	flag.IntVar(&cfg.DriverConcurrency, "driver-concurrency", 4, "The driver's --concurrency.")
	flag.StringVar(&cfg.DriverMemoryLimit, "driver-memory-limit", "",
		"The driver's container memory limit (a quantity such as 256Mi), passed to it as its chart passes "+
			"resources.limits.memory; the driver sets the Go runtime's limit from it. Empty sets none.")
	flag.IntVar(&cfg.Unrelated, "unrelated", -1,
		"Plain ClusterIP Services created in another namespace before the largest size; "+
			"negative means as many as the largest size.")
	scenarios := flag.String("scenarios", "",
		"Comma-separated scenario letters (a static, b the driver's path, c association, d teardown, w wire: MetalLB only); "+
			"c and d need b; with -anchors, each anchor runs with its letter (the peer with a, the allocator alone with b, "+
			"pinned Services with c). "+
			"Empty runs all.")
	handoffs := flag.String("handoff", "auto",
		"Comma-separated --handoff modes of the driver (auto, gap); the driver's path, association and teardown run once per mode.")
	flag.IntVar(&cfg.WireRebuilds, "wire-rebuilds", 100,
		"Rebuilds the wire scenario measures (it needs root, ip and -driver metallb; 0 skips it).")
	flag.BoolVar(&cfg.Anchors, "anchors", false,
		"Also run the anchors beside their scenarios, with both managers stopped: the Cluster API in-cluster IPAM "+
			"provider beside a (with -peer-assets, and its unthrottled build with -peer-unthrottled-assets), the allocator alone beside b, pinned Services beside c.")
	flag.StringVar(&cfg.PeerAssets, "peer-assets", os.Getenv("CAPI_IPAM_ASSETS"),
		"Folder with the Cluster API in-cluster IPAM provider's manager and crds/ (make capi-ipam); empty skips the peer.")
	flag.StringVar(&cfg.PeerUnthrottledAssets, "peer-unthrottled-assets", os.Getenv("CAPI_IPAM_UNTHROTTLED_ASSETS"),
		"Folder with the same provider built with controller-runtime v0.21 or later, whose client has no rate limit "+
			"(make capi-ipam-unthrottled), run as a second peer beside the first; empty skips it.")
	flag.BoolVar(&cfg.KeepDir, "keep", false,
		"Keep the cluster's folder (every process's log); a run where a scenario did not converge keeps it anyway.")
	flag.BoolVar(&cfg.Pprof, "pprof", false, "Serve each manager's pprof handlers on a local port, logged at start.")
	flag.DurationVar(&cfg.Settle, "settle", 2*time.Second,
		"Wait after each scenario converges before reading the counters.")
	flag.Parse()
	// The benchmark's own watch cache logs nothing worth reading.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	cfg.QPS = float32(qps)
	cfg.Handoffs = strings.Split(*handoffs, ",")
	if *scenarios != "" {
		cfg.Scenarios = strings.Split(*scenarios, ",")
	}
	if err := validScenarios(cfg.Scenarios); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var err error
	if cfg.Sizes, err = parseSizes(*sizes); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if _, err := memoryLimitBytes(cfg.DriverMemoryLimit); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := Run(ctx, cfg)
	if report != nil {
		report.Markdown(os.Stdout)
		if werr := runkit.WriteJSON(*out, report); werr != nil {
			fmt.Fprintln(os.Stderr, werr)
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// validScenarios refuses, before any cluster starts, a choice of scenarios
// the benchmark cannot run: an unknown letter, or c or d without b, whose
// bound claims they associate and tear down.
func validScenarios(letters []string) error {
	for _, l := range letters {
		switch l {
		case "a", "b", "w":
		case "c", "d":
			if !slices.Contains(letters, "b") {
				return fmt.Errorf("-scenarios %s: %s needs b, whose bound claims it works on (-scenarios b,%s)", strings.Join(letters, ","), l, l)
			}
		default:
			return fmt.Errorf("-scenarios: %q is no scenario (a, b, c, d or w)", l)
		}
	}
	return nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-n: %q is not a positive number of claims", f)
		}
		out = append(out, n)
	}
	if len(out) > maxSizes {
		return nil, fmt.Errorf("-n: %d sizes; a run measures at most %d (each takes six /16s of 100.64.0.0/10)", len(out), maxSizes)
	}
	return out, nil
}

// memoryLimitBytes is a -driver-memory-limit in bytes, as the charts pass
// resources.limits.memory to the managers; "" for none.
func memoryLimitBytes(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 {
		return "", fmt.Errorf("-driver-memory-limit: %q is not a positive quantity such as 256Mi", s)
	}
	return strconv.FormatInt(q.Value(), 10), nil
}
