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

// Package harness hands the end-to-end specs a cluster with MetalLB and both
// charts installed in order, and the few actions that depend on how the
// cluster is made: stopping and starting a manager or MetalLB.
//
// Local builds the cluster from the project's own binaries (no Docker): the
// managers run as local processes under their charts' ServiceAccounts, by
// impersonation, so the specs also prove the generated RBAC is sufficient.
// Kind drives a kind cluster that hack/kind-e2e.sh prepared, with the
// managers running as the charts' Deployments.
//
// It must not import the managers' packages: the specs drive the system
// through the API alone.
package harness
