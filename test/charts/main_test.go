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
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	localv1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// One control plane serves every test of the package: each test works in
// namespaces and with admission objects of its own, and kit removes them
// when the test ends (failing it if they stay); the package fails if
// anything is left once every test has run. MetalLB is not needed;
// admission happens in the API server.
var (
	sharedOnce    sync.Once
	sharedCluster *cluster.Cluster
	sharedErr     error
	// kit writes as the admin and tidies up after each test.
	kit *testkit.Kit
	// found is what the cluster held before the first test made anything.
	found testkit.Inventory
)

// startCluster returns the package's control plane, starting it on first use.
func startCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		if sharedCluster, sharedErr = cluster.Start(cluster.Options{WithoutMetalLB: true}); sharedErr != nil {
			return
		}
		var k client.Client
		if k, sharedErr = client.New(sharedCluster.Config, client.Options{Scheme: manager.NewScheme()}); sharedErr != nil {
			return
		}
		kit = testkit.New(k).Tidy(testkit.Tidying{Within: time.Minute})
		found, sharedErr = kit.Inventory(context.Background(), sights())
	})
	if sharedErr != nil {
		t.Fatalf("starting the local control plane: %v", sharedErr)
	}
	return sharedCluster
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCluster != nil {
		if code == 0 {
			code = kit.LeftBehind(found, sights(), time.Minute)
		}
		if err := sharedCluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the local control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sights are what a test of the package can leave behind: namespaces, what
// the charts install cluster-wide, and what the managers make.
func sights() []testkit.Sight {
	return []testkit.Sight{
		testkit.SightOf(corev1.SchemeGroupVersion.WithKind("Namespace"), ""),
		testkit.SightOf(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), ""),
		testkit.SightOf(admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"), ""),
		testkit.SightOf(admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"), ""),
		testkit.SightOf(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), ""),
		testkit.SightOf(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), ""),
		testkit.SightOf(localv1alpha1.GroupVersion.WithKind("IPAddressClass"), ""),
		testkit.SightOf(localv1alpha1.GroupVersion.WithKind("IPAddress"), ""),
		testkit.SightOf(params.IPAddressPoolGVK, cluster.MetalLBNamespace),
		testkit.SightOf(params.L2AdvertisementGVK, cluster.MetalLBNamespace),
		testkit.SightOf(params.BGPAdvertisementGVK, cluster.MetalLBNamespace),
	}
}
