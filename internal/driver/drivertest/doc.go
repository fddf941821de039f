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

// Package drivertest is the contract every driver backend must pass: a
// table of specs that run against a real API server, with the core manager
// and the backend's driver manager running for real, and that watch only the
// API objects a tenant and an admin see (IPAddressClass, IPAddressClaim,
// IPAddress, Services). A backend runs it with a few lines:
//
//	func TestContract(t *testing.T) { drivertest.Run(t, cfg, myHarness{}) }
//
// What differs between backends comes from the small Harness the backend's
// test supplies; what only some backends can do is an optional interface
// the suite discovers by type assertion (HandPinner), never a skipped spec.
//
// The specs: provisioning (IPv4, IPv6, Dual); exhaustion of a small class
// (Pending with a reason naming the provisioner, Bound once an address
// frees); release under Retain (Released, still held, taken from its
// Service) and under Delete (the address goes and the backend frees it);
// capacity and use (the class's status.capacity, used and available, per
// family, follow claims as they come and go, a burst written in batches);
// association (a Service naming a claim reports exactly its addresses, and
// none once it stops); refusal (a claim of another namespace, a claim not
// Bound); conflict (a Service another load balancer gives a bound address
// turns it Conflict; with HandPinner, a hand pin on a held address is
// refused); duplicate (an admin's copy of an address the driver recorded,
// made within the same second as it, is Pending (Duplicate) within seconds
// and held by nothing, while the recorded one stays Bound and held); teardown (no backend state and no driver pin left once claims,
// addresses and classes are gone); and a crash: the driver killed right
// after its first, second or third write of each step of a claim's life,
// after which a new driver completes the step.
//
// It is test support: it runs the core (internal/core) in the test process
// as a cluster runs it beside the driver, and is imported only by tests.
package drivertest
