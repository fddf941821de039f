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

// Package params owns the MetalLB driver's reading of a class's
// spec.parameters: the strict decoding (through internal/driver/classparams,
// which every driver shares) and validation of those parameters, and their
// rendering into the MetalLB IPAddressPool and advertisement that serve the
// class. The chart's class-parameters admission policy repeats the
// validation in CEL with the same messages; change both together. It also reads other pools' addresses, so that overlaps
// can be refused before MetalLB refuses its whole configuration.
//
// It is pure: it builds and inspects objects but never talks to the API
// server, sets no owner references and decides nothing about claims or
// addresses. IP arithmetic belongs to internal/ipaddr.
package params
