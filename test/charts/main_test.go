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

package charts

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/cozystack/address-controller/test/cluster"
)

// One control plane serves every test of the package: each test works in
// namespaces and with admission objects of its own. MetalLB is not needed;
// admission happens in the API server.
var (
	sharedOnce    sync.Once
	sharedCluster *cluster.Cluster
	sharedErr     error
)

// startCluster returns the package's control plane, starting it on first use.
func startCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		sharedCluster, sharedErr = cluster.Start(cluster.Options{WithoutMetalLB: true})
	})
	if sharedErr != nil {
		t.Fatalf("starting the local control plane: %v", sharedErr)
	}
	return sharedCluster
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCluster != nil {
		if err := sharedCluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the local control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}
