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

// Package node runs real Kubernetes nodes beside the local control plane
// (test/cluster), as kind runs them in containers: each node is a network
// namespace and a private mount namespace on a bridge, running containerd,
// runc, kubelet and kube-proxy (nftables mode), every binary built from Go
// modules by the Makefile (`make node-tools`; nft comes from Debian's
// package, unpacked into bin/, never installed).
//
// Nothing a node does reaches the host: its firewall rules, routes and pod
// network namespaces live in its network namespace; what kubelet and
// containerd write to their fixed paths (/var/lib/kubelet, /var/lib/containerd,
// /run/containerd, /var/log/pods) lands in the node's folder through bind
// mounts over /var and /run in its mount namespace, and so do the kernel
// settings kubelet would otherwise set on the host (a file bound over each
// /proc/sys entry, holding the value kubelet wants). The one thing written
// outside the folder is a cgroup per node in every cgroup hierarchy, nested
// under the test process's own, which the harness and the cluster's
// watchdog remove with every process in it.
//
// Addresses come from ranges set aside for tests: each harness takes a /24
// of 198.18.0.0/16 (RFC 2544) for its segment, with the host's end of a
// veth pair at .1, the nodes from .10 and a client namespace at .254; Pods
// take a /24 each of PodRange (100.96.0.0/16, RFC 6598); Services come
// from the cluster's ServiceCIDRv4. The host gets a route to its segment
// alone and none to Pods or Services; the nodes get no default route, only
// one to the Services over the segment. The API server reaches kubelets,
// webhooks and aggregated APIs through the cluster's egress proxy, which
// the harness hands a dialer inside the first node
// (cluster.SetClusterDialer), as a konnectivity agent would be.
//
// The namespaces, the bridge, the veth pairs and the proxy that lets
// kubelet and kube-proxy reach the API server on the host's loopback come
// from test/netns, which the wire test bed (test/wire) builds on too. The
// same proxy listens on the address the API server advertises
// (cluster.AdvertiseAddress), which each node has on its loopback: the
// `kubernetes` Service's endpoint, so that Pods reach the API server
// through the Service as in any cluster.
//
// It must not import the managers' packages: it talks to the cluster through
// the API alone.
package node
