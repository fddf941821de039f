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

// Package cilium is the Cilium LB-IPAM backend of the driver framework
// (cilium-iad): one CiliumLoadBalancerIPPool per class, placeholder Services
// through internal/driver/placeholder, pins with lbipam.cilium.io/ips and
// shared handoffs with lbipam.cilium.io/sharing-key. Its tests run against
// the real Cilium operator (make cilium) on the local control plane, and
// record what LB-IPAM does (lbipam_test.go; docs/writing-a-driver.md).
//
// It imports neither internal/core, another backend, nor Cilium's own Go
// module: Cilium's pools are read and written as unstructured objects.
package cilium
