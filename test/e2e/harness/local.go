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
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/address-controller/test/cluster"
)

// Local is the harness that needs no Docker: the local control plane with
// the MetalLB controller (or Cilium's operator, see StartLocalCilium), both
// charts installed with the pinned helm, and the managers running as local
// processes that impersonate their charts' ServiceAccounts with the
// arguments of their charts' Deployments.
type Local struct {
	Cluster  *cluster.Cluster
	Helm     Helm
	root     string
	binaries map[Manager]string
	running  map[Manager]*cluster.Process
	// driver and driverNS are the driver's manager and release namespace.
	driver   Manager
	driverNS string
	// metallb says whether the cluster runs MetalLB's controller;
	// uninstalled, whether the charts are uninstalled.
	metallb, uninstalled bool
}

var _ Harness = (*Local)(nil)

// StartLocal brings up the local harness with the MetalLB driver.
func StartLocal(ctx context.Context) (*Local, error) {
	return startLocal(ctx, Driver, DriverNamespace, cluster.Options{})
}

// StartLocalCilium brings up the local harness with the Cilium driver and
// Cilium's operator in place of MetalLB (both would answer the same
// Services).
func StartLocalCilium(ctx context.Context) (*Local, error) {
	return startLocal(ctx, CiliumDriver, CiliumNamespace, cluster.Options{WithoutMetalLB: true, WithCilium: true})
}

func startLocal(ctx context.Context, driver Manager, driverNS string, opts cluster.Options) (h *Local, err error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	c, err := cluster.Start(opts)
	if err != nil {
		return nil, err
	}
	h = &Local{Cluster: c, root: root, binaries: map[Manager]string{}, running: map[Manager]*cluster.Process{},
		driver: driver, driverNS: driverNS, metallb: !opts.WithoutMetalLB,
		Helm: Helm{Binary: filepath.Join(root, "bin", "helm"), Kubeconfig: c.Kubeconfig, Home: filepath.Join(c.Dir, "helm")}}
	defer func() {
		if err != nil {
			_ = h.Close()
			h = nil
		}
	}()
	if _, err := os.Stat(h.Helm.Binary); err != nil {
		return h, fmt.Errorf("no helm at %s: run make helm", h.Helm.Binary)
	}
	for _, m := range []Manager{Core, driver} {
		if h.binaries[m], err = cluster.GoBuild("./cmd/"+string(m), filepath.Join(c.Dir, "bin")); err != nil {
			return h, err
		}
	}
	return h, h.InstallCharts(ctx)
}

// Config authenticates as a cluster admin.
func (h *Local) Config() *rest.Config { return h.Cluster.Config }

// Kubeconfig is the admin kubeconfig.
func (h *Local) Kubeconfig() string { return h.Cluster.Kubeconfig }

// Kubectl is the pinned kubectl.
func (h *Local) Kubectl() string { return h.Cluster.Assets.Kubectl() }

// PlaceholderNamespace is the driver's release namespace (the chart's default).
func (h *Local) PlaceholderNamespace() string { return h.driverNS }

// StartManager runs a manager as its chart's ServiceAccount, with its chart's
// Deployment's arguments (bar the listen addresses), and waits until ready.
func (h *Local) StartManager(ctx context.Context, m Manager) error {
	if p := h.running[m]; p != nil && p.Running() {
		return nil
	}
	ns := CoreNamespace
	if m == h.driver {
		ns = h.driverNS
	}
	args, err := h.deploymentArgs(ctx, ns, string(m))
	if err != nil {
		return err
	}
	kubeconfig, err := h.Cluster.KubeconfigFor("system:serviceaccount:" + ns + ":" + string(m))
	if err != nil {
		return err
	}
	port, err := cluster.FreePort()
	if err != nil {
		return err
	}
	args = append(localArgs(args), "--kubeconfig="+kubeconfig, "--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(port))
	p, err := h.Cluster.StartProcess(string(m), h.binaries[m], args...)
	if err != nil {
		return err
	}
	h.running[m] = p
	return waitReady(ctx, p, port)
}

// StopManager stops a manager gracefully.
func (h *Local) StopManager(_ context.Context, m Manager) error {
	p := h.running[m]
	if p == nil {
		return nil
	}
	delete(h.running, m)
	return p.Stop()
}

// Log returns what a manager has logged in this run.
func (h *Local) Log(m Manager) string {
	b, _ := os.ReadFile(filepath.Join(h.Cluster.Dir, string(m)+".log"))
	return string(b)
}

// UninstallCharts stops the managers, then uninstalls both charts.
func (h *Local) UninstallCharts(ctx context.Context) error {
	h.uninstalled = true
	for _, m := range []Manager{h.driver, Core} {
		if err := h.StopManager(ctx, m); err != nil {
			return err
		}
	}
	return h.Helm.UninstallChartsOf(ctx, h.driver, h.driverNS)
}

// InstallCharts installs both charts in order and starts the managers.
func (h *Local) InstallCharts(ctx context.Context) error {
	if err := h.Helm.InstallChartsOf(ctx, h.root, h.driver, h.driverNS, nil, nil); err != nil {
		return err
	}
	h.uninstalled = false
	return h.startManagers(ctx)
}

func (h *Local) startManagers(ctx context.Context) error {
	for _, m := range []Manager{Core, h.driver} {
		if err := h.StartManager(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// Restore starts MetalLB's controller if it is stopped, installs the charts
// if they are uninstalled, and starts the managers that are stopped.
func (h *Local) Restore(ctx context.Context) error {
	if h.metallb && h.Cluster.MetalLBPID() == 0 {
		if err := h.StartMetalLB(ctx); err != nil {
			return err
		}
	}
	if h.uninstalled {
		return h.InstallCharts(ctx)
	}
	return h.startManagers(ctx)
}

// StopMetalLB stops the MetalLB controller.
func (h *Local) StopMetalLB(context.Context) error { return h.Cluster.StopMetalLB() }

// StartMetalLB starts the MetalLB controller.
func (h *Local) StartMetalLB(context.Context) error { return h.Cluster.StartMetalLB() }

// Close stops the managers and the cluster.
func (h *Local) Close() error {
	var errs []error
	for m := range h.running {
		errs = append(errs, h.StopManager(context.Background(), m))
	}
	return errors.Join(append(errs, h.Cluster.Stop())...)
}

// deploymentArgs reads the arguments a chart gives its manager.
func (h *Local) deploymentArgs(ctx context.Context, namespace, name string) ([]string, error) {
	cs, err := kubernetes.NewForConfig(h.Cluster.Config)
	if err != nil {
		return nil, err
	}
	var d *appsv1.Deployment
	if d, err = cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("reading the chart's Deployment %s/%s: %w", namespace, name, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c.Args, nil
		}
	}
	return nil, fmt.Errorf("deployment %s/%s has no manager container", namespace, name)
}

// localArgs drops the listen addresses a Pod would use: a local process
// binds its own.
func localArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--metrics-bind-address") && !strings.HasPrefix(a, "--health-probe-bind-address") {
			out = append(out, a)
		}
	}
	return out
}

func waitReady(ctx context.Context, p *cluster.Process, port int) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if !p.Running() {
			return fmt.Errorf("the manager exited:\n%s", p.Log())
		}
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the manager was not ready within a minute:\n%s", p.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
