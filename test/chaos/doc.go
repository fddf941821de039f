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

// Command chaos runs the managers under SIGKILL chaos and failover and checks
// that no address is ever held twice, leaked or lost.
//
// It starts the local control plane with the real MetalLB controller, builds
// cmd/address-controller and cmd/metallb-iad, and runs two replicas of each
// as real processes with leader election on; the cilium presets run
// cmd/cilium-iad and the real Cilium operator's LB-IPAM instead of the
// MetalLB driver and MetalLB (backend.go). While a workload creates claims
// (two classes of the driver, Delete and Retain, and a static class; IPv4,
// IPv6 and Dual), creates Services naming them, deletes and rebuilds
// Services, removes and re-adds their annotations and deletes claims, it
// SIGKILLs a core replica, a driver replica (leader or follower, read from
// the Lease) or the allocator (MetalLB or the Cilium operator) every few
// seconds and restarts it a second later. Watches on Services, IPAddresses,
// claims and usage ledgers check the invariants all along: some on every
// event, the bounded ones (a withdrawn Service letting go, phases, holds,
// leftovers, ledgers, Cilium's pool labels) by a sweep every second against
// clocks that run only while the core, the driver and the allocator can act
// (bounded.go); after the last kill every claim must be Bound, every Service
// naming a Bound claim must report exactly its addresses and no bounded
// invariant may be broken, within a minute (30 s for the cilium preset). It
// prints a markdown report, writes it as JSON, and exits non-zero on any
// violation or on non-convergence:
//
//	go run ./test/chaos -presets issue19,issue13 -out bin/chaos.json
//	go run ./test/chaos -presets cilium -out bin/chaos.json
//
// `make chaos` runs the full sizes; TestChaosShort and TestChaosShortCilium
// run small ones inside `make test`. Like the benchmark it never imports the
// managers' packages: it talks to them only through the API.
package main
