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
// family, follow claims as they come and go, a burst written in batches;
// the class's metric series start at zero and go with it; a class moved to
// other ranges keeps its addresses, Bound and held, outside them, says so,
// and counts them apart);
// association (a Service naming a claim reports exactly its addresses, a
// plain Service none; they go back to the backend once it stops naming it
// or goes, and come to the next Service naming it); refusal (every request
// the driver cannot honour: a claim of another namespace, missing (or
// named as no claim can be), with no class resolved, not Bound, another
// driver's, carried by another Service, of other families,
// a Service of another type; reported once, with no address and no pin);
// re-targeting (a Pending claim moved to another class is provisioned
// there, its old request withdrawn; one deleted withdraws its request;
// with Stopper and Placeholderer, an address given outside the class's
// ranges is not recorded);
// conflict (a Service another load
// balancer gives a bound address turns it Conflict, also when it came
// while the driver was down and carries the labels of a hold; with
// HandPinner, a hand pin on a held address is refused); duplicate (an
// admin's copy of an address the driver recorded, made within the same
// second as it, is Pending (Duplicate) within seconds, held by nothing and
// rewritten by nobody, while the recorded one stays Bound and held);
// adoption, with HandPinner (a Service pinned by hand keeps its address
// while an admin records it for a claim the Service then names); with the
// core down (the driver writes an address's status only after the core
// has; a claim deleted under Delete gets no hold on its way out); teardown
// (no backend state and no driver pin left once claims, addresses and
// classes are gone); and a crash: the driver killed right before each write
// of each step of a claim's life (provisioning, association, dissociation,
// release), after which a new driver completes the step, with one IPAddress
// per family and nothing left behind; with ServiceHolder, in both handoff
// modes, the shared one never leaving an address unreported. With ServiceHolder, the handoffs:
// the shared one never leaves an address unreported, the gap one is taken
// by the Services the backend cannot share with, a hold deleted behind
// the driver's back comes back, and a carrier deleted while the driver is
// down goes by the operating manual's procedure and the address is held
// again, and a former tenant keeps nothing (its carrier nothing of the
// driver's, the hold a key of its own, and a Service carrying what the
// tenant could read on its carrier does not get the address); with
// HandPinner too, a Service pinned by hand to the address never
// gets it across shared handoffs, and under gap handoffs takes it only
// until it goes.
//
// It is test support: it runs the core (internal/core) in the test process
// as a cluster runs it beside the driver, and is imported only by tests.
package drivertest
