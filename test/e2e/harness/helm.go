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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Helm runs the pinned helm against a kubeconfig, with its caches kept out of
// the user's home.
type Helm struct {
	Binary, Kubeconfig, Home string
}

// Run runs helm with args and returns its output.
func (h Helm) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.Binary, append([]string{"--kubeconfig", h.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(h.Home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(h.Home, "config"),
		"HELM_DATA_HOME="+filepath.Join(h.Home, "data"),
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// InstallCharts installs the core chart, then the MetalLB driver's chart,
// each into its own namespace, with extra --set values per chart.
func (h Helm) InstallCharts(ctx context.Context, root string, coreSets, driverSets []string) error {
	return h.InstallChartsOf(ctx, root, Driver, DriverNamespace, coreSets, driverSets)
}

// InstallChartsOf installs the core chart, then the chart of driver into
// namespace.
//
// The core chart takes ownership of the CRDs it renders: the local control
// plane installs them before any chart, as a cluster first installed with
// a chart that shipped them in crds/ has them (docs/install.md,
// "Upgrading").
func (h Helm) InstallChartsOf(ctx context.Context, root string, driver Manager, namespace string, coreSets, driverSets []string) error {
	charts := []struct {
		release, namespace string
		sets               []string
		extra              []string
	}{
		{string(Core), CoreNamespace, coreSets, []string{"--take-ownership"}},
		{string(driver), namespace, driverSets, nil},
	}
	for _, c := range charts {
		args := []string{"upgrade", "--install", c.release, filepath.Join(root, "charts", c.release),
			"--namespace", c.namespace, "--create-namespace"}
		args = append(args, c.extra...)
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		if _, err := h.Run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// UninstallCharts uninstalls the MetalLB driver's chart, then the core
// chart.
func (h Helm) UninstallCharts(ctx context.Context) error {
	return h.UninstallChartsOf(ctx, Driver, DriverNamespace)
}

// UninstallChartsOf uninstalls the chart of driver, then the core chart.
func (h Helm) UninstallChartsOf(ctx context.Context, driver Manager, namespace string) error {
	for _, c := range []struct{ release, namespace string }{
		{string(driver), namespace}, {string(Core), CoreNamespace},
	} {
		if _, err := h.Run(ctx, "uninstall", c.release, "--namespace", c.namespace, "--wait"); err != nil {
			return err
		}
	}
	return nil
}
