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
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// containerdConfig is containerd's configuration for a node: its fixed
// paths land in the node's folder through the mount namespace; the sandbox
// image is the one the harness imported, pinned so that image garbage
// collection keeps it; restrict_oom_score_adj because these machines
// withhold CAP_SYS_RESOURCE, which lowering a score needs.
func containerdConfig(sandbox, runc, cniBin, cniConf string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return strings.Join([]string{
		`version = 3`,
		`root = "/var/lib/containerd"`,
		`state = "/run/containerd"`,
		``,
		`[grpc]`,
		`  address = "/run/containerd/containerd.sock"`,
		``,
		`[plugins.'io.containerd.internal.v1.opt']`,
		`  path = "/var/lib/containerd/opt"`,
		``,
		`[plugins.'io.containerd.cri.v1.images']`,
		`  snapshotter = "overlayfs"`,
		`  [plugins.'io.containerd.cri.v1.images'.pinned_images]`,
		`    sandbox = ` + q(sandbox),
		``,
		`[plugins.'io.containerd.cri.v1.runtime']`,
		`  restrict_oom_score_adj = true`,
		`  [plugins.'io.containerd.cri.v1.runtime'.cni]`,
		`    bin_dirs = [` + q(cniBin) + `]`,
		`    conf_dir = ` + q(cniConf),
		`  [plugins.'io.containerd.cri.v1.runtime'.containerd]`,
		`    default_runtime_name = "runc"`,
		`    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]`,
		`      runtime_type = "io.containerd.runc.v2"`,
		`      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]`,
		`        BinaryName = ` + q(runc),
		`        SystemdCgroup = false`,
		``,
	}, "\n")
}

// cniConfig is the node's Pod network: a bridge (cni0) whose address is the
// Pods' gateway, addresses from the node's Pod range, no masquerading (it
// would need the host's iptables; the nodes route Pod ranges to each other
// instead).
func cniConfig(podCIDR netip.Prefix) string {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "node-harness",
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      "cni0",
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":   "host-local",
				"ranges": []any{[]any{map[string]any{"subnet": podCIDR.String()}}},
				"routes": []any{map[string]any{"dst": "0.0.0.0/0"}},
			},
		}},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b)
}

// kubeletConfig is kubelet's configuration: cgroup v1 through cgroupfs
// under the node's own cgroup root; its own OOM score left alone (lowering
// it needs CAP_SYS_RESOURCE); the API server (anonymous, from the
// node's segment alone) allowed everything; eviction thresholds low
// enough that a busy shared disk does not taint the node; a resolv.conf
// whose only name server is the Pod's own loopback, so no lookup leaves the
// machine; and a node Lease of 8 s, renewed every 2 s, so that the node
// lifecycle controller (test/cluster runs it with a 16 s grace period)
// tells a stopped node from a live one in seconds rather than a minute.
func kubeletConfig(address netip.Addr, cgroupRoot, resolvConf string, podCIDR netip.Prefix) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
cgroupsPerQOS: true
failSwapOn: false
oomScoreAdj: 0
protectKernelDefaults: false
resolvConf: %s
podCIDR: %s
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
rotateCertificates: false
serverTLSBootstrap: false
nodeLeaseDurationSeconds: 8
`, address, cgroupRoot, resolvConf, podCIDR)
}

// kubeProxyConfig is kube-proxy's configuration: nftables mode (nft from
// Debian's package, in the node alone), the Pod range as the cluster's, and
// no change to the kernel's conntrack settings, which are the host's.
func kubeProxyConfig(name, kubeconfig string, podRange netip.Prefix) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
mode: nftables
clusterCIDR: %s
detectLocalMode: ClusterCIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, name, podRange)
}

// kernelTunables are the settings kubelet writes unless it finds them set
// (kubelet's setupKernelTunables): none is per namespace, so the node finds
// each in a file bound over its /proc/sys entry instead of the host's.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}
