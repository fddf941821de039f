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

// Package ipaddr is the address-controller's IP arithmetic: parsing single
// addresses and MetalLB-style ranges, naming IPAddress objects after their
// address, sizing, merging and bucketing ranges for indexed overlap lookups.
//
// It is pure and depends on the standard library only. It must not import
// Kubernetes packages, the API types or any driver: everything that knows what
// a class, a claim or a pool is lives elsewhere and calls in here.
package ipaddr
