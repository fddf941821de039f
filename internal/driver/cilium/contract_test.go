//go:build cilium

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

package cilium_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/cilium"
	"github.com/cozystack/address-controller/internal/driver/drivertest"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
)

// placeholderNS is the Cilium driver's placeholder namespace in these tests.
const placeholderNS = "cilium-iad-system"

// TestContract runs the driver contract with the real Cilium operator's
// LB-IPAM as the allocator.
func TestContract(t *testing.T) {
	err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placeholderNS}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	drivertest.Run(t, testCluster.Config, contractHarness{})
}

type contractHarness struct{}

func (contractHarness) Provisioner() string { return v1alpha1.ProvisionerCilium }

func (contractHarness) StartDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager {
	return startDriver(t, cfg, driver.HandoffAuto)
}

// StartGapDriver runs the driver with --handoff=gap.
func (contractHarness) StartGapDriver(t *testing.T, cfg *rest.Config) *inprocess.Manager {
	return startDriver(t, cfg, driver.HandoffGap)
}

func startDriver(t *testing.T, cfg *rest.Config, handoff string) *inprocess.Manager {
	opts := cilium.Options{PlaceholderNamespace: placeholderNS}
	opts.Driver.Concurrency = 4
	opts.Driver.Handoff = handoff
	return inprocess.Start(t, cfg, func(mgr ctrl.Manager) error { return cilium.Setup(mgr, opts) }, opts.ManagerOptions)
}

// Ranges are carved apart from the recording tests' pools (198.18.x.0/28):
// LB-IPAM refuses overlapping pools.
func (contractHarness) Ranges() (v4, v6 netip.Prefix) {
	n := nextRange.Add(1)
	return netip.MustParsePrefix(fmt.Sprintf("198.19.%d.0/28", n%256)),
		netip.MustParsePrefix(fmt.Sprintf("2001:db8:c1:%x::/124", n))
}

func (contractHarness) Parameters(ranges ...netip.Prefix) string {
	raw, _ := json.Marshal(map[string]any{"addresses": ranges})
	return string(raw)
}

// PinByHand writes lbipam.cilium.io/ips and the label the class's pool
// selects, as an admin would.
func (contractHarness) PinByHand(svc *corev1.Service, class string, ips ...netip.Addr) {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	metav1.SetMetaDataAnnotation(&svc.ObjectMeta, "lbipam.cilium.io/ips", strings.Join(s, ","))
	metav1.SetMetaDataLabel(&svc.ObjectMeta, v1alpha1.LabelCiliumPool, placeholder.LabelValue(class))
}

func (contractHarness) PlaceholderNamespace() string { return placeholderNS }

// MarkAllocation labels it for the class's pool.
func (contractHarness) MarkAllocation(ph *corev1.Service, class string) {
	ph.Labels[v1alpha1.LabelCiliumPool] = placeholder.LabelValue(class)
}

// StopAllocator stops the Cilium operator.
func (contractHarness) StopAllocator(t *testing.T) (restart func()) {
	if err := testCluster.StopCilium(); err != nil {
		t.Fatal(err)
	}
	restart = func() {
		if testCluster.CiliumPID() == 0 {
			if err := testCluster.StartCilium(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(restart)
	return restart
}

// Requests are the claim's allocation placeholders.
func (contractHarness) Requests(ctx context.Context, c client.Client, claim *v1alpha1.IPAddressClaim) ([]string, error) {
	return drivertest.AllocationPlaceholders(ctx, c, placeholderNS, claim)
}

// KeyOf reads lbipam.cilium.io/sharing-key.
func (contractHarness) KeyOf(svc *corev1.Service) string {
	return svc.Annotations["lbipam.cilium.io/sharing-key"]
}

// Leftovers are the class's placeholders and rendered pool.
func (contractHarness) Leftovers(ctx context.Context, c client.Client, class string) ([]string, error) {
	out, err := drivertest.Objects(ctx, c, &corev1.ServiceList{}, "Service", placeholderNS, map[string]string{v1alpha1.LabelClass: class})
	if err != nil {
		return nil, err
	}
	pools := &unstructured.UnstructuredList{}
	pools.SetGroupVersionKind(cilium.PoolGVK.GroupVersion().WithKind(cilium.PoolGVK.Kind + "List"))
	more, err := drivertest.Objects(ctx, c, pools, cilium.PoolGVK.Kind, "", map[string]string{v1alpha1.LabelClass: placeholder.LabelValue(class)})
	return append(out, more...), err
}

// Unshareable are the Services LB-IPAM shares no address with the driver's
// hold: one under traffic policy Local (with a selector), one on the hold's
// port.
func (contractHarness) Unshareable() map[string]b.ServiceOption {
	return map[string]b.ServiceOption{"LocalTrafficPolicy": b.LocalTraffic(), "PortCollision": b.Port(9)}
}
