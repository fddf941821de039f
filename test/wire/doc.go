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

// Package wire builds a small layer-2 network out of Linux network namespaces
// beside the local control plane (test/cluster), so that tests can ask
// whether packets arrive, not only what MetalLB reports.
//
// The network: a bridge in a namespace of its own; "node" namespaces, each
// registered as a Node object and running the real MetalLB speaker (layer 2,
// no FRR, memberlist between the nodes) with its kernel told never to answer
// ARP for an address on another interface (arp_ignore=1, arp_announce=2); and a
// "client" namespace whose only routes lead onto the bridge. A small proxier
// does what kube-proxy's IPVS mode does on each node: it binds every
// load-balancer address to the node's loopback (where IPVS mode uses the
// dummy kube-ipvs0) and forwards
// connections to a ready endpoint of the Service; backends are HTTP servers
// on "pod" addresses inside the node namespaces, and the tests write their
// EndpointSlices (there is no kubelet). The client learns where an address
// lives only through ARP, which only a speaker answers.
//
// Every address comes from the documentation ranges; nothing is added to the
// host's own namespace. Namespaces are registered with the cluster's
// watchdog, so they are deleted even when the test process dies. It needs
// root and iproute2's ip.
//
// The namespaces, the bridge, the veth pairs and the proxy that lets a
// speaker reach the API server on the host's loopback come from test/netns,
// which test/node builds its nodes on too.
//
// It must not import the managers' packages: it talks to the cluster through
// the API alone.
package wire
