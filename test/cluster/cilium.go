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
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CiliumNamespace is where the Cilium operator takes its leader-election
// Lease.
const CiliumNamespace = "cilium-system"

// CiliumPoolCRD is the CRD of the pools Cilium's LB-IPAM assigns from.
const CiliumPoolCRD = "ciliumloadbalancerippools.cilium.io"

// ciliumOperatorArgs runs the operator out of cluster with LB-IPAM alone:
// pod IPAM from Node objects (which it then never sees), every other
// controller, server and garbage collector off. The operator creates the
// Cilium CRDs itself.
func ciliumOperatorArgs(dir, kubeconfig string, apiPort int) []string {
	return []string{
		"--k8s-kubeconfig-path", kubeconfig,
		"--k8s-namespace", CiliumNamespace,
		"--ipam", "kubernetes",
		"--enable-lb-ipam=true",
		"--skip-crd-creation=false",
		// Without a kvstore the operator forces CRD identities, whose
		// checks refuse to start with the CiliumEndpoint collector off: it
		// runs, rarely, over no CiliumEndpoints.
		"--identity-allocation-mode", "crd",
		"--cilium-endpoint-gc-interval=1h",
		// Listeners: the health API on a free port, nothing else.
		"--operator-api-serve-addr", "127.0.0.1:" + strconv.Itoa(apiPort),
		"--shell-sock-path", filepath.Join(dir, "cilium-shell.sock"),
		"--enable-metrics=false",
		"--enable-gops=false",
		// Everything that is not LB-IPAM: off.
		"--enable-node-ipam=false",
		"--enable-ingress-controller=false",
		"--enable-ingress-secrets-sync=false",
		"--enable-gateway-api-secrets-sync=false",
		"--enable-policy-secrets-sync=false",
		"--enable-cilium-endpoint-slice=false",
		"--enable-l7-proxy=false",
		"--validate-network-policy=false",
		"--identity-gc-interval=0",
		"--nodes-gc-interval=0",
		"--unmanaged-pod-watcher-interval=0",
		"--remove-cilium-node-taints=false",
		"--set-cilium-node-taints=false",
		"--set-cilium-is-up-condition=false",
		"--synchronize-k8s-nodes=false",
		"--synchronize-k8s-services=false",
	}
}

// StartCilium starts the Cilium operator with LB-IPAM and waits until it
// reports healthy and the pool CRD is established. Run the cluster
// WithoutMetalLB beside it: both would answer the same Services.
func (c *Cluster) StartCilium() error {
	operator := c.Assets.CiliumOperator()
	if operator == "" {
		return fmt.Errorf("no Cilium operator built (run `make cilium`, or set CILIUM_ASSETS)")
	}
	if err := c.ensureNamespace(CiliumNamespace); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	c.cilium = newProcess("cilium-operator", operator, c.Dir,
		ciliumOperatorArgs(c.Dir, c.Kubeconfig, port)...)
	if err := c.cilium.start(c.watchdog); err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if !c.cilium.running() {
			return fmt.Errorf("the Cilium operator exited; see %s", c.cilium.log)
		}
		if c.healthy(url) && c.crdEstablished(CiliumPoolCRD) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the Cilium operator was not healthy with %s established within two minutes; see %s",
		CiliumPoolCRD, c.cilium.log)
}

func (c *Cluster) healthy(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (c *Cluster) crdEstablished(name string) bool {
	cs, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// StopCilium stops the Cilium operator gracefully.
func (c *Cluster) StopCilium() error { return c.cilium.stop() }

// KillCilium kills the Cilium operator at once, as a crash would.
func (c *Cluster) KillCilium() error { return c.cilium.kill() }

// CiliumPID is the process id of the running Cilium operator, or 0 when it
// is not running. Benchmarks read its memory and CPU from /proc.
func (c *Cluster) CiliumPID() int { return c.cilium.pid() }

// CiliumLog returns what the Cilium operator has written so far.
func (c *Cluster) CiliumLog() string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "cilium-operator.log"))
	return string(b)
}
