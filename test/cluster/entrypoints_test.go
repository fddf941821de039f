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

package cluster

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestManagersStartAndStop builds each binary, runs it against the cluster
// with leader election, and checks it becomes ready, takes its lease, and
// exits cleanly on SIGTERM, handing the lease back.
func TestManagersStartAndStop(t *testing.T) {
	g := NewWithT(t)
	c, err := Start(Options{WithoutControllerManager: true, WithoutMetalLB: true})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = c.Stop() })
	cs := kubernetes.NewForConfigOrDie(c.Config)

	for _, tc := range []struct{ pkg, lease string }{
		{"./cmd/address-controller", "address-controller.local.sdn.cozystack.io"},
		{"./cmd/metallb-iad", "metallb-iad.local.sdn.cozystack.io"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			g := NewWithT(t)
			bin, err := GoBuild(tc.pkg, t.TempDir())
			g.Expect(err).NotTo(HaveOccurred())
			port, err := FreePort()
			g.Expect(err).NotTo(HaveOccurred())
			p, err := c.StartProcess(filepath.Base(tc.pkg), bin,
				"--kubeconfig", c.Kubeconfig,
				"--leader-elect", "--leader-election-namespace", "default",
				"--health-probe-bind-address", "127.0.0.1:"+strconv.Itoa(port),
			)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = p.Kill() }()

			g.Eventually(func() (int, error) {
				g.Expect(p.Running()).To(BeTrue(), p.Log())
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
				if err != nil {
					return 0, err
				}
				_ = resp.Body.Close()
				return resp.StatusCode, nil
			}, 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))
			g.Eventually(func() (string, error) {
				l, err := cs.CoordinationV1().Leases("default").Get(t.Context(), tc.lease, metav1.GetOptions{})
				if err != nil || l.Spec.HolderIdentity == nil {
					return "", err
				}
				return *l.Spec.HolderIdentity, nil
			}, 30*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty())

			g.Expect(p.Stop()).To(Succeed())
			g.Expect(p.ExitCode()).To(Equal(0), p.Log())
			l, err := cs.CoordinationV1().Leases("default").Get(t.Context(), tc.lease, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(l.Spec.HolderIdentity).To(Or(BeNil(), HaveValue(BeEmpty())), "the lease is handed back on shutdown")
		})
	}
}
