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

// Package metallbtest is what the MetalLB driver's integration tests share:
// one local control plane with the real MetalLB controller per test
// binary, the core and the driver run in the test process (for the whole
// package, or per test where a test stops them), MetalLB classes over
// ranges no other test uses, and the state tests wait for, read through the
// API server. Every namespace and class a test makes here is removed when it
// ends, and the test fails if anything of them stays (testkit.Tidying).
//
// It serves the driver's test packages: metallb (the unit tests and the
// contract), steadytest (tests that stop nothing, run in parallel against
// shared managers), stoptest (tests that stop MetalLB, the driver or the
// core, one at a time) and importtest (the import and the handover). It
// must not reach into the driver: tests observe
// what users observe.
package metallbtest
