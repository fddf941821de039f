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

// Command demo is `make demo`: it starts a local control plane with the
// MetalLB controller, installs both charts, runs both managers under their
// charts' ServiceAccounts, and walks a newcomer through the flagship flow,
// printing every step. As root it ends with a real request on the wire (see
// test/wire): a client namespace finds the address by ARP, answered by the
// MetalLB speaker of a node namespace, and gets a page from Service B's
// backend. Then it leaves the cluster running until Ctrl-C.
// `demo -down` stops a running demo from another terminal.
//
// It drives the system only through the API and kubectl, as a newcomer would;
// it must not import the managers' packages.
package main
