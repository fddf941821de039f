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

// Package cluster runs a local Kubernetes control plane for tests, benchmarks
// and the demo, built entirely from Go modules by the project's Makefile:
// envtest's etcd and kube-apiserver (dual-stack, with service ranges large
// enough for tens of thousands of Services), kube-controller-manager running
// the garbage collector and namespace controllers, MetalLB's CRDs, and the
// MetalLB controller process; on request, the Cilium operator with LB-IPAM
// alone, out of cluster (it creates Cilium's CRDs itself). The API server
// serves a certificate of the cluster's own CA that also names the
// `kubernetes` Service's ClusterIPs and the address it advertises, so
// that Pods on real nodes (test/node) reach it through the Service.
//
// A watchdog process kills everything the cluster started when the process
// that started it dies, however it dies, so a failed or interrupted test
// leaves no process behind.
//
// It must not import the managers' packages: callers run the managers
// against the kubeconfig it hands back.
package cluster
