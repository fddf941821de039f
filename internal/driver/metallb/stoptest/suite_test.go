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
	"os"
	"testing"

	. "github.com/onsi/gomega"

	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	"github.com/cozystack/address-controller/test/inprocess"
)

// The tests here stop MetalLB, the driver or the core, or run a driver with
// options of their own: each starts what it needs, one test at a time.
func TestMain(m *testing.M) { os.Exit(mt.Main(m, mt.Options{})) }

// restartMetalLB starts the MetalLB controller again if a test stopped it
// and did not start it itself.
func restartMetalLB() {
	if mt.Cluster.MetalLBPID() == 0 {
		_ = mt.Cluster.StartMetalLB()
	}
}

// startTrusting opens a test that stops MetalLB under a driver that has not
// noticed yet: it starts a core and a driver whose gate never shuts
// (mt.StartTrustingDriver) with the handoff mode given, and returns the
// driver, for the test to stop, with the test's Gomega and namespace.
func startTrusting(t *testing.T, handoff string) (drv *inprocess.Manager, g *WithT, ns string) {
	t.Helper()
	mt.StartCore(t)
	drv = mt.StartTrustingDriver(t, handoff)
	return drv, NewWithT(t), mt.Namespace(t)
}
