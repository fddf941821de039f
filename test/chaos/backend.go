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

package main

import (
	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/cluster"
)

// backend is the driver a run puts under chaos, with the allocator it
// drives: what differs between a MetalLB run and a Cilium run. The harness
// reads both drivers from the outside, so these are the names each writes.
type backend struct {
	// name labels the allocator in the report ("MetalLB", "Cilium").
	name string
	// provisioner serves the workload's two driver classes.
	provisioner string
	// cmd is the driver's main package; lease, its default leader lease.
	cmd, lease string
	// placeholderNamespace is where the driver keeps its placeholders.
	placeholderNamespace string
	// sharingKey is the allocator's annotation for a key under which
	// Services share an address.
	sharingKey string
	// gated: the driver writes Services only while its gate on the
	// allocator is open (metallb_iad_metallb_ready).
	gated bool
	// poolLabel, when set, is the label the driver puts on a Service for
	// its class's pool to select it, together with its pin (Cilium).
	poolLabel string
	// allocatorKill is the kill kind of the allocator in the report.
	allocatorKill string
}

var (
	metallbBackend = backend{
		name: "MetalLB", provisioner: v1alpha1.ProvisionerMetalLB,
		cmd: "./cmd/metallb-iad", lease: "metallb-iad.local.sdn.cozystack.io",
		placeholderNamespace: placeholderNamespace, sharingKey: "metallb.io/allow-shared-ip",
		gated: true, allocatorKill: killMetalLB,
	}
	ciliumBackend = backend{
		name: "Cilium", provisioner: v1alpha1.ProvisionerCilium,
		cmd: "./cmd/cilium-iad", lease: "cilium-iad.local.sdn.cozystack.io",
		placeholderNamespace: "cilium-iad-system", sharingKey: "lbipam.cilium.io/sharing-key",
		poolLabel: v1alpha1.LabelCiliumPool, allocatorKill: killCilium,
	}
)

// backend is the driver the run puts under chaos.
func (c Config) backend() backend {
	if c.Cilium {
		return ciliumBackend
	}
	return metallbBackend
}

// driverArgs are the flags of a driver replica beyond the shared ones.
func (b backend) driverArgs() []string {
	args := []string{"--placeholder-namespace", b.placeholderNamespace}
	if b.gated {
		args = append(args, "--metallb-namespace", cluster.MetalLBNamespace)
	}
	return args
}

// ciliumLease is the Cilium operator's leader lease in
// cluster.CiliumNamespace: its LB-IPAM runs only in the replica holding it.
const ciliumLease = "cilium-operator-resource-lock"
