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

package node

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cozystack/address-controller/test/cluster"
)

// Assets locates the binaries a node runs.
type Assets struct {
	// Kubelet and KubeProxy come from the control plane's folder
	// (KUBEBUILDER_ASSETS).
	Kubelet, KubeProxy string
	// ContainerdDir holds containerd, ctr and containerd-shim-runc-v2.
	ContainerdDir string
	// Runc is the runc binary.
	Runc string
	// CNIDir holds the CNI plugins (bridge, host-local, loopback).
	CNIDir string
	// NftDir holds the nft wrapper kube-proxy runs.
	NftDir string
}

// Ctr is the path of containerd's ctr.
func (a Assets) Ctr() string { return filepath.Join(a.ContainerdDir, "ctr") }

// FindAssets takes NODE_ASSETS from the environment (the Makefile sets it)
// and otherwise looks in the repository's bin/node, where `make node-tools`
// builds everything under unversioned links; kubelet and kube-proxy sit
// beside the cluster's other Kubernetes binaries.
func FindAssets(c *cluster.Cluster) (Assets, error) {
	dir := os.Getenv("NODE_ASSETS")
	if dir == "" {
		root, err := cluster.RepoRoot()
		if err != nil {
			return Assets{}, err
		}
		dir = filepath.Join(root, "bin", "node")
	}
	a := Assets{
		Kubelet:       filepath.Join(c.Assets.KubeDir, "kubelet"),
		KubeProxy:     filepath.Join(c.Assets.KubeDir, "kube-proxy"),
		ContainerdDir: filepath.Join(dir, "containerd"),
		Runc:          filepath.Join(dir, "runc", "runc"),
		CNIDir:        filepath.Join(dir, "cni"),
		NftDir:        filepath.Join(dir, "nftables", "bin"),
	}
	for _, p := range []string{
		a.Kubelet, a.KubeProxy, c.Assets.KubeScheduler(),
		filepath.Join(a.ContainerdDir, "containerd"), a.Ctr(), filepath.Join(a.ContainerdDir, "containerd-shim-runc-v2"),
		a.Runc,
		filepath.Join(a.CNIDir, "bridge"), filepath.Join(a.CNIDir, "host-local"), filepath.Join(a.CNIDir, "loopback"),
		filepath.Join(a.NftDir, "nft"),
	} {
		if _, err := os.Stat(p); err != nil {
			return Assets{}, fmt.Errorf("%w (run `make node-tools` to build what the nodes run)", err)
		}
	}
	return a, nil
}

// CheckRequirements says why nodes cannot run here, or nil.
func CheckRequirements() error {
	if os.Geteuid() != 0 {
		return errors.New("the node harness needs root (network and mount namespaces, cgroups, a bridge)")
	}
	for _, tool := range []string{"ip", "nsenter", "unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the node harness needs %s on PATH (iproute2, util-linux)", tool)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		return errors.New("the node harness runs kubelet on cgroup v1 hierarchies under /sys/fs/cgroup, and finds none")
	}
	return nil
}
