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

package harness

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
)

// Manager names one of the two managers.
type Manager string

// The managers: the core and a driver (MetalLB's unless a harness says
// otherwise).
const (
	Core         Manager = "address-controller"
	Driver       Manager = "metallb-iad"
	CiliumDriver Manager = "cilium-iad"
)

// Release namespaces the charts are installed into.
const (
	CoreNamespace   = "address-controller-system"
	DriverNamespace = "metallb-iad-system"
	CiliumNamespace = "cilium-iad-system"
)

// Harness is a cluster ready for the specs.
type Harness interface {
	// Config authenticates as a cluster admin.
	Config() *rest.Config
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig() string
	// Kubectl is the path of the kubectl to run against the cluster.
	Kubectl() string
	// PlaceholderNamespace is where the driver keeps its placeholders.
	PlaceholderNamespace() string
	// StopManager stops a manager; StartManager starts it again and waits
	// until it is ready.
	StopManager(ctx context.Context, m Manager) error
	StartManager(ctx context.Context, m Manager) error
	// StopMetalLB stops the MetalLB controller; StartMetalLB starts it again.
	StopMetalLB(ctx context.Context) error
	StartMetalLB(ctx context.Context) error
	// UninstallCharts stops the managers and uninstalls the driver chart,
	// then the core chart; InstallCharts installs them again, in order, and
	// starts the managers.
	UninstallCharts(ctx context.Context) error
	InstallCharts(ctx context.Context) error
	// Restore brings back whatever a spec stopped or uninstalled (MetalLB,
	// the charts, the managers) and leaves alone what runs: a spec removes
	// what it made while they run.
	Restore(ctx context.Context) error
	// Close releases everything the harness started.
	Close() error
}

// New returns the harness called name: "local" or "kind".
func New(ctx context.Context, name string) (Harness, error) {
	switch name {
	case "", "local":
		return StartLocal(ctx)
	case "kind":
		return ConnectKind(ctx)
	default:
		return nil, fmt.Errorf("unknown harness %q: use local or kind", name)
	}
}
