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

// Package cilium is to hold the Cilium LB-IPAM backend of the driver
// framework (issue 17). For now it holds only the tests that record what the
// Cilium operator's LB-IPAM does with pools, pins, sharing keys, refusals and
// deletions: the behaviour such a backend relies on, measured against the
// real operator (make cilium) on the local control plane.
//
// It must not import internal/core, internal/driver/metallb, or Cilium's own
// Go module: Cilium objects are read and written as unstructured objects.
package cilium
