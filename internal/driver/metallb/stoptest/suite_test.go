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

package stoptest

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/inprocess"
)

// The tests here stop MetalLB, the driver or the core, or run a driver with
// options of their own: each starts what it needs, one test at a time.
func TestMain(m *testing.M) { os.Exit(mt.Main(m, mt.Options{})) }

// steal stops the driver, deletes the address's hold and lets thief take the
// address, then starts the driver again and returns it.
func steal(t *testing.T, g Gomega, running *inprocess.Manager, addr v1alpha1.ClaimedAddress, thief *corev1.Service) *inprocess.Manager { //nolint:unparam // the restarted driver, for tests that stop it again
	running.Stop()
	for _, name := range mt.Placeholders(g, addr.Name)() {
		g.Expect(mt.Client.Delete(context.Background(), b.Service(mt.PlaceholderNS, name))).To(Succeed())
	}
	mt.Kit.Create(g, thief)
	g.Eventually(mt.IngressOf(g, thief.Namespace, thief.Name), mt.Timeout, mt.Tick).Should(Equal([]string{addr.Address}))
	return mt.StartDriver(t)
}

// restartMetalLB starts the MetalLB controller again if a test stopped it
// and did not start it itself.
func restartMetalLB() {
	if mt.Cluster.MetalLBPID() == 0 {
		_ = mt.Cluster.StartMetalLB()
	}
}
