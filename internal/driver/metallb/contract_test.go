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

package metallb_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/drivertest"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
)

func TestMain(m *testing.M) { os.Exit(mt.Main(m, mt.Options{})) }

// TestContract runs the driver contract with the real MetalLB controller as
// the allocator.
func TestContract(t *testing.T) { drivertest.Run(t, mt.Cluster.Config, contractHarness{}) }

type contractHarness struct{}

func (contractHarness) Provisioner() string { return mt.Provisioner }

func (contractHarness) StartDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager {
	opts := mt.DriverOptions(driver.HandoffAuto)
	return inprocess.Start(t, cfg, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
}

// StartGapDriver runs the driver with --handoff=gap.
func (contractHarness) StartGapDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager {
	opts := mt.DriverOptions(driver.HandoffGap)
	return inprocess.Start(t, cfg, func(mgr ctrl.Manager) error { return metallb.Setup(mgr, opts) }, opts.ManagerOptions)
}

func (contractHarness) Ranges() (v4, v6 netip.Prefix) {
	p4, p6 := mt.FreshRange()
	return netip.MustParsePrefix(p4), netip.MustParsePrefix(p6)
}

func (contractHarness) Parameters(ranges ...netip.Prefix) string {
	raw, _ := json.Marshal(map[string]any{"addresses": ranges})
	return string(raw)
}

// Leftovers are the class's placeholders and rendered MetalLB objects.
func (contractHarness) Leftovers(ctx context.Context, c client.Client, class string) ([]string, error) {
	return mt.Leftovers(ctx, c, class)
}

func (contractHarness) PlaceholderNamespace() string { return mt.PlaceholderNS }

// MarkAllocation names the class's MetalLB pool.
func (contractHarness) MarkAllocation(ph *corev1.Service, class string) {
	ph.Annotations["metallb.io/address-pool"] = params.PoolName(class)
}

// StopAllocator stops MetalLB's controller.
func (contractHarness) StopAllocator(t *testing.T) (restart func()) {
	if err := mt.Cluster.StopMetalLB(); err != nil {
		t.Fatal(err)
	}
	restart = func() {
		if mt.Cluster.MetalLBPID() == 0 {
			if err := mt.Cluster.StartMetalLB(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(restart)
	return restart
}

// Requests are the claim's allocation placeholders.
func (contractHarness) Requests(ctx context.Context, c client.Client, claim *v1alpha1.IPAddressClaim) ([]string, error) {
	return drivertest.AllocationPlaceholders(ctx, c, mt.PlaceholderNS, claim)
}

// PinByHand writes metallb.io/loadBalancerIPs, as an admin would; MetalLB
// finds the pool by the addresses.
func (contractHarness) PinByHand(svc *corev1.Service, _ string, ips ...netip.Addr) {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	b.PinnedByHand(strings.Join(s, ","))(svc)
}

// KeyOf reads metallb.io/allow-shared-ip.
func (contractHarness) KeyOf(svc *corev1.Service) string {
	return svc.Annotations["metallb.io/allow-shared-ip"]
}

// ProbeWrites are the gate's questions to MetalLB, asked at every start.
func (contractHarness) ProbeWrites() []string { return []string{"/services/metallb-iad-probe-"} }

// Unshareable are the Services MetalLB shares no address with the driver's
// hold: one under traffic policy Local (with a selector), one on the hold's
// port.
func (contractHarness) Unshareable() map[string]b.ServiceOption {
	return map[string]b.ServiceOption{"LocalTrafficPolicy": b.LocalTraffic(), "PortCollision": b.Port(9)}
}
