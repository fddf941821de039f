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

// Package importer is the import command, part of the driver framework:
// `kubectl ipam import` (the kubectl plugin, internal/plugin, with every
// backend) and `<driver> import` (a driver's binary, with its own). It
// brings addresses an allocator already gave plain Services under claims,
// without any Service changing its address, undoes such an import, and
// hands the allocator's overlapping configuration over to the class.
//
// Its surface is kubectl's: the kubeconfig flags of cli-runtime
// (flags.go), tables or one versioned document per run (-o json|yaml,
// output.go), a progress line per wait on stderr (progress.go), and a
// deadline per wait.
//
// What it needs of the allocator comes from the driver's backend through
// two optional capabilities, found by type assertion: driver.Importer (the
// class's ranges, and the annotation that pins a Service) and
// driver.Handoverer (moving the ranges out of an admin's own pools, after
// untying the imported Services that name one of them). The
// MetalLB backend has both; a backend with neither cannot import.
//
// It runs as a command with the admin's credentials, not inside the driver:
// it creates what an admin would by hand (claims, pre-bound IPAddresses,
// annotations) and leaves binding to the core and association to the
// driver. Planning is a pure function of what it reads (plan.go); every
// write is idempotent and keyed by deterministic names, so a run cut short
// finishes when it is run again. It must not import internal/core.
package importer
