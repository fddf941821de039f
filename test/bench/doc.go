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

// Command bench measures address-controller on the local control plane with
// the real MetalLB controller: throughput, claim-to-Bound latency, API writes
// per claim, and the memory and CPU of both managers and of MetalLB, at
// several numbers of claims, side by side with the API server's own ceiling
// for a trivial custom object measured in the same run. With -driver cilium
// it measures the Cilium LB-IPAM driver beside the Cilium operator instead
// (drivers.go holds all it knows of either; the two never share a cluster).
//
// It runs the two managers as real processes built from cmd/, so that their
// memory and CPU can be read from /proc, and reads API writes from the API
// server's apiserver_request_total. It prints a markdown table and writes the
// same numbers as JSON:
//
//	go run ./test/bench -n 100,1000,10000 -out bin/bench.json
//
// `make bench` and `make bench-quick` run it with -anchors, which adds what a
// user would run instead (anchors.go); TestBenchSmoke runs it without them,
// with 50 claims inside `make test`. It never imports the managers' packages:
// it talks to them only through the API, as a tenant and an admin would.
package main
