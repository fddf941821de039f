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
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// modulePath identifies this repository's root while walking up from the
// working directory.
const modulePath = "github.com/cozystack/address-controller"

// RepoRoot returns the root of this repository, found by walking up from the
// working directory to the go.mod of modulePath.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == modulePath
		}
	}
	return false
}

// Assets locates the binaries and CRDs a cluster runs.
type Assets struct {
	// KubeDir holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	KubeDir string
	// MetalLBDir holds the MetalLB controller binary and its crds/ folder.
	MetalLBDir string
	// CiliumDir holds the Cilium operator binary and Cilium's crds/ folder;
	// empty when `make cilium` has not built them (only Cilium tests need
	// them).
	CiliumDir string
	// CRDDir holds this project's CRDs.
	CRDDir string
}

// CiliumOperator is the path of the Cilium operator binary, or "" when no
// build was found.
func (a Assets) CiliumOperator() string {
	if a.CiliumDir == "" {
		return ""
	}
	p := filepath.Join(a.CiliumDir, "cilium-operator")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// KubeScheduler is the path of kube-scheduler, which Options.WithWorkloads
// runs.
func (a Assets) KubeScheduler() string { return filepath.Join(a.KubeDir, "kube-scheduler") }

// Kubectl is the path of the pinned kubectl.
func (a Assets) Kubectl() string { return filepath.Join(a.KubeDir, "kubectl") }

// FindAssets takes KUBEBUILDER_ASSETS, METALLB_ASSETS and CILIUM_ASSETS from
// the environment (the Makefile sets them) and otherwise looks in the
// repository's bin/, where `make control-plane` and `make cilium` build them.
func FindAssets() (Assets, error) {
	root, err := RepoRoot()
	if err != nil {
		return Assets{}, err
	}
	a := Assets{
		KubeDir:    os.Getenv("KUBEBUILDER_ASSETS"),
		MetalLBDir: os.Getenv("METALLB_ASSETS"),
		CiliumDir:  os.Getenv("CILIUM_ASSETS"),
		CRDDir:     filepath.Join(root, "config", "crd", "bases"),
	}
	if a.KubeDir == "" {
		if a.KubeDir, err = onlyMatch(filepath.Join(root, "bin", "k8s", "*")); err != nil {
			return Assets{}, err
		}
	}
	if a.MetalLBDir == "" {
		if a.MetalLBDir, err = onlyMatch(filepath.Join(root, "bin", "metallb", "*")); err != nil {
			return Assets{}, err
		}
	}
	if a.CiliumDir == "" {
		// Optional: a missing build fails StartCilium, not every cluster.
		a.CiliumDir, _ = onlyMatch(filepath.Join(root, "bin", "cilium", "*"))
	}
	for _, p := range []string{
		filepath.Join(a.KubeDir, "etcd"),
		filepath.Join(a.KubeDir, "kube-apiserver"),
		filepath.Join(a.KubeDir, "kube-controller-manager"),
		filepath.Join(a.KubeDir, "kubectl"),
		filepath.Join(a.MetalLBDir, "controller"),
		filepath.Join(a.MetalLBDir, "crds"),
		a.CRDDir,
	} {
		if _, err := os.Stat(p); err != nil {
			return Assets{}, fmt.Errorf("%w (run `make control-plane` to build the local control plane)", err)
		}
	}
	// envtest reads the binaries from KUBEBUILDER_ASSETS.
	if err := os.Setenv("KUBEBUILDER_ASSETS", a.KubeDir); err != nil {
		return Assets{}, err
	}
	return a, nil
}

func onlyMatch(pattern string) (string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", errors.New("nothing built at " + pattern + " (run `make control-plane`)")
	case 1:
		return matches[0], nil
	default:
		return "", fmt.Errorf("several builds match %s (%s): set KUBEBUILDER_ASSETS and METALLB_ASSETS, or run through make",
			pattern, strings.Join(matches, ", "))
	}
}
