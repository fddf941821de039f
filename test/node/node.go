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
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/netns"
)

// Timeouts of a node's start.
const (
	daemonTimeout = time.Minute
	readyTimeout  = 3 * time.Minute
)

// Node is a running node: a network namespace on the segment and a mount
// namespace, with containerd, kubelet and kube-proxy.
type Node struct {
	Name string
	// Address is the node's InternalIP, on the segment.
	Address netip.Addr
	// PodCIDR is the node's Pod range.
	PodCIDR netip.Prefix
	// StartTime is how long the node took from nothing to Ready with its
	// Service rules programmed.
	StartTime time.Duration

	h       *Harness
	index   int
	labels  map[string]string
	dir     string
	ns      *namespace
	cgroups *cgroupTree

	api *netns.APIProxy

	holder, containerd, kubelet, proxy *cluster.Process
}

func (h *Harness) newNode(i int, o NodeOptions) *Node {
	return &Node{
		Name:    o.Name,
		Address: hostAt(h.Segment, firstNode+i),
		PodCIDR: podCIDR(i),
		h:       h,
		index:   i,
		labels:  o.Labels,
		dir:     filepath.Join(h.dir, o.Name),
	}
}

// start brings the node up, step by step, and returns once it is Ready
// and kube-proxy reports healthy.
func (n *Node) start(ctx context.Context) error {
	began := time.Now()
	if err := n.prepareFolder(); err != nil {
		return err
	}
	var err error
	if n.ns, err = n.h.addNamespace(n.Name); err != nil {
		return err
	}
	if err := n.h.plug(n.ns, fmt.Sprintf("node%d", n.index), n.Address); err != nil {
		return err
	}
	// The node routes between its Pods, the segment and the other nodes'
	// Pods.
	if err := n.ns.sysctl(map[string]string{"net/ipv4/ip_forward": "1"}); err != nil {
		return err
	}
	if err := n.startAPIProxy(); err != nil {
		return err
	}
	if n.cgroups, err = makeCgroups(n.h.id + "-" + n.Name); err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	for _, d := range n.cgroups.dirs() {
		n.h.c.WatchCgroup(d)
	}
	if err := n.startHolder(); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.ImportImage(ctx, n.h.sandbox.Archive); err != nil {
		return err
	}
	if err := n.register(ctx); err != nil {
		return err
	}
	if err := n.startKubelet(ctx); err != nil {
		return err
	}
	if err := n.startKubeProxy(ctx); err != nil {
		return err
	}
	n.StartTime = time.Since(began)
	return nil
}

// The node's folder, seen from inside its mount namespace as /var and
// /run.
func (n *Node) varDir() string { return filepath.Join(n.dir, "var") }
func (n *Node) runDir() string { return filepath.Join(n.dir, "run") }

func (n *Node) prepareFolder() error {
	for _, d := range []string{
		"var/lib/kubelet", "var/lib/containerd", "var/lib/cni", "var/log", "var/tmp", "run", "cni", "sysctl",
	} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, l := range [][2]string{{"/run", "var/run"}, {"/run/lock", "var/lock"}} {
		if err := os.Symlink(l[0], filepath.Join(n.dir, l[1])); err != nil {
			return err
		}
	}
	for k, v := range kernelTunables {
		if err := os.WriteFile(n.tunableFile(k), []byte(v+"\n"), 0o644); err != nil {
			return err
		}
	}
	files := map[string]string{
		"containerd.toml":              containerdConfig(n.h.sandbox.Ref, n.h.assets.Runc, n.h.assets.CNIDir, filepath.Join(n.dir, "cni")),
		"cni/10-node-harness.conflist": cniConfig(n.PodCIDR),
		// Pods resolve names through their own loopback, where nothing
		// answers: no lookup leaves the machine.
		"resolv.conf": "nameserver 127.0.0.1\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(n.dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) tunableFile(key string) string {
	return filepath.Join(n.dir, "sysctl", strings.ReplaceAll(key, "/", "."))
}

// startAPIProxy forwards the API server's loopback address and port
// inside the node to the real one, so kubelet and kube-proxy reach it at
// the address its certificate names; and the same port on the address the
// API server advertises (cluster.AdvertiseAddress, given to the node's
// loopback), the `kubernetes` Service's endpoint, to which kube-proxy
// sends what Pods send to the Service.
func (n *Node) startAPIProxy() (err error) {
	advertised := netip.MustParseAddr(cluster.AdvertiseAddress)
	if err := netns.SetUp(n.ns.NL, "lo", netip.PrefixFrom(advertised, advertised.BitLen())); err != nil {
		return err
	}
	n.api, err = netns.StartAPIProxy(n.ns.Namespace, n.h.apiPort, advertised)
	return err
}

// holderScript runs as the first process of the node's mount namespace
// (private: nothing mounted in it reaches the host): it joins the node's
// cgroup, binds the node's folders over /var and /run and a file over each
// kernel setting kubelet would write, says so, and sleeps, holding the
// namespaces for the daemons nsenter puts in them.
func (n *Node) holderScript() string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, f := range n.cgroups.joinFiles() {
		fmt.Fprintf(&b, "echo $$ > %s\n", shellQuote(f))
	}
	fmt.Fprintf(&b, "mount --bind %s /var\n", shellQuote(n.varDir()))
	fmt.Fprintf(&b, "mount --bind %s /run\n", shellQuote(n.runDir()))
	for _, k := range slices.Sorted(maps.Keys(kernelTunables)) {
		fmt.Fprintf(&b, "mount --bind %s %s\n", shellQuote(n.tunableFile(k)), shellQuote(filepath.Join("/proc/sys", k)))
	}
	fmt.Fprintf(&b, "touch %s\n", shellQuote(filepath.Join(n.dir, "namespaces-ready")))
	b.WriteString("exec sleep infinity\n")
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (n *Node) startHolder() error {
	script := filepath.Join(n.dir, "namespaces.sh")
	if err := os.WriteFile(script, []byte(n.holderScript()), 0o755); err != nil {
		return err
	}
	var err error
	n.holder, err = n.h.c.StartProcess(n.Name+"-namespaces", "nsenter", "--net="+n.ns.Path(), "--",
		"unshare", "--mount", "--propagation", "private", "--", "/bin/sh", script)
	if err != nil {
		return err
	}
	return waitFor(context.Background(), daemonTimeout, "the node's namespaces were made", n.holder.Log, func() (bool, error) {
		if !n.holder.Running() {
			return false, fmt.Errorf("the node's namespaces did not come up:\n%s", tail(n.holder.Log(), 20))
		}
		_, err := os.Stat(filepath.Join(n.dir, "namespaces-ready"))
		return err == nil, nil
	})
}

// nodePath is the PATH of the node's daemons: containerd finds its shim
// there, kube-proxy its nft.
func (n *Node) nodePath() string {
	return strings.Join([]string{n.h.assets.ContainerdDir, n.h.assets.NftDir, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}, ":")
}

// startDaemon runs bin inside the node's namespaces and cgroup, logging to
// <cluster dir>/<node>-<name>.log.
func (n *Node) startDaemon(name, bin string, args ...string) (*cluster.Process, error) {
	var join strings.Builder
	join.WriteString("for f in")
	for _, f := range n.cgroups.joinFiles() {
		join.WriteString(" " + shellQuote(f))
	}
	join.WriteString(`; do echo $$ > "$f"; done; exec "$@"`)
	argv := append([]string{"-t", strconv.Itoa(n.holder.PID()), "-m", "-n", "--", "/bin/sh", "-c", join.String(), "sh", bin}, args...)
	return n.h.c.StartProcessWithEnv(n.Name+"-"+name, "nsenter", []string{"PATH=" + n.nodePath()}, argv...)
}

// inNode runs a command inside the node's namespaces and returns its
// output.
func (n *Node) inNode(ctx context.Context, bin string, args ...string) ([]byte, error) {
	argv := append([]string{"-t", strconv.Itoa(n.holder.PID()), "-m", "-n", "--", bin}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", argv...)
	cmd.Env = append(os.Environ(), "PATH="+n.nodePath())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s on node %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), n.Name, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Exec runs a program inside the node's namespaces (nft, say, or ctr) and
// returns its combined output.
func (n *Node) Exec(ctx context.Context, bin string, args ...string) ([]byte, error) {
	return n.inNode(ctx, bin, args...)
}

const containerdSocket = "/run/containerd/containerd.sock"

func (n *Node) startContainerd(ctx context.Context) error {
	var err error
	n.containerd, err = n.startDaemon("containerd", filepath.Join(n.h.assets.ContainerdDir, "containerd"),
		"--config", filepath.Join(n.dir, "containerd.toml"))
	if err != nil {
		return err
	}
	return waitFor(ctx, daemonTimeout, "containerd answered", n.containerd.Log, func() (bool, error) {
		if !n.containerd.Running() {
			return false, fmt.Errorf("containerd exited:\n%s", tail(n.containerd.Log(), 30))
		}
		_, err := n.inNode(ctx, n.h.assets.Ctr(), "--address", containerdSocket, "version")
		return err == nil, nil
	})
}

// ImportImage imports an image archive into the node's containerd, in the
// namespace the CRI plugin serves.
func (n *Node) ImportImage(ctx context.Context, archive string) error {
	_, err := n.inNode(ctx, n.h.assets.Ctr(), "--address", containerdSocket, "--namespace", "k8s.io",
		"images", "import", archive)
	return err
}

// register creates the Node object before kubelet starts, with the node's
// Pod range (which only it sets: the control plane allocates none), and
// writes the credentials kubelet and kube-proxy use: the node's own
// identity (system:node:<name>, authorised by the Node authorizer) and
// kube-proxy's (system:kube-proxy, bound by default).
func (n *Node) register(ctx context.Context) error {
	labels := map[string]string{corev1.LabelHostname: n.Name, corev1.LabelOSStable: "linux"}
	maps.Copy(labels, n.labels)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Spec:       corev1.NodeSpec{PodCIDR: n.PodCIDR.String(), PodCIDRs: []string{n.PodCIDR.String()}},
	}
	if _, err := n.h.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("registering node %s: %w", n.Name, err)
	}
	for _, u := range []struct{ file, user, group string }{
		{"kubelet.kubeconfig", "system:node:" + n.Name, "system:nodes"},
		{"kube-proxy.kubeconfig", "system:kube-proxy", ""},
	} {
		var groups []string
		if u.group != "" {
			groups = append(groups, u.group)
		}
		cfg, err := n.h.c.AddUser(u.user, groups...)
		if err != nil {
			return err
		}
		if err := cluster.WriteKubeconfig(filepath.Join(n.dir, u.file), cfg); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) startKubelet(ctx context.Context) error {
	config := filepath.Join(n.dir, "kubelet.yaml")
	if err := os.WriteFile(config, []byte(kubeletConfig(n.Address, n.cgroups.root, filepath.Join(n.dir, "resolv.conf"), n.PodCIDR)), 0o644); err != nil {
		return err
	}
	var err error
	n.kubelet, err = n.startDaemon("kubelet", n.h.assets.Kubelet,
		"--config", config,
		"--kubeconfig", filepath.Join(n.dir, "kubelet.kubeconfig"),
		"--hostname-override", n.Name,
		"--node-ip", n.Address.String(),
		"--v", "2",
	)
	if err != nil {
		return err
	}
	return waitFor(ctx, readyTimeout, "the node was Ready", n.kubelet.Log, func() (bool, error) {
		if !n.kubelet.Running() {
			return false, fmt.Errorf("kubelet exited:\n%s", tail(n.kubelet.Log(), 40))
		}
		node, err := n.h.cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		return err == nil && Ready(node), nil
	})
}

// Ready says whether the node's Ready condition is True.
func Ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (n *Node) startKubeProxy(ctx context.Context) error {
	config := filepath.Join(n.dir, "kube-proxy.yaml")
	if err := os.WriteFile(config, []byte(kubeProxyConfig(n.Name, filepath.Join(n.dir, "kube-proxy.kubeconfig"), PodRange)), 0o644); err != nil {
		return err
	}
	var err error
	if n.proxy, err = n.startDaemon("kube-proxy", n.h.assets.KubeProxy, "--config", config, "--v", "2"); err != nil {
		return err
	}
	// Healthy once it has programmed the rules for what it has seen.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return n.ns.dial(ctx, addr)
	}}}
	return waitFor(ctx, daemonTimeout, "kube-proxy was healthy", n.proxy.Log, func() (bool, error) {
		if !n.proxy.Running() {
			return false, fmt.Errorf("kube-proxy exited:\n%s", tail(n.proxy.Log(), 40))
		}
		resp, err := client.Get("http://127.0.0.1:10256/healthz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// Logs are what the node's daemons logged, by daemon.
func (n *Node) Logs() map[string]string {
	out := map[string]string{}
	for name, p := range map[string]*cluster.Process{"containerd": n.containerd, "kubelet": n.kubelet, "kube-proxy": n.proxy} {
		if p != nil {
			out[name] = p.Log()
		}
	}
	return out
}

// close stops the daemons, kills whatever still runs in the node's cgroups
// (containers and their shims), removes the cgroups, the namespace and the
// Node object.
// Stop ends the node as a power cut would: every process of it (kube-proxy,
// kubelet, containerd, the shims and the containers, and the process that
// holds its namespaces) is killed at once. Its Node object and its network
// namespace, with its address on the segment, stay: the control plane sees a
// node that stopped answering, as it would see a machine that went down. A
// stopped node stays stopped; Close removes it with the others.
func (n *Node) Stop() error {
	var errs []error
	for _, p := range []*cluster.Process{n.proxy, n.kubelet, n.containerd, n.holder} {
		if p != nil {
			errs = append(errs, p.Kill())
		}
	}
	if n.cgroups != nil {
		errs = append(errs, n.cgroups.kill(30*time.Second))
	}
	return errors.Join(errs...)
}

func (n *Node) close() error {
	var errs []error
	for _, p := range []*cluster.Process{n.proxy, n.kubelet, n.containerd} {
		if p != nil {
			errs = append(errs, p.Stop())
		}
	}
	if n.cgroups != nil {
		errs = append(errs, n.cgroups.kill(30*time.Second))
	}
	if n.holder != nil {
		errs = append(errs, n.holder.Stop())
	}
	if n.cgroups != nil {
		if err := n.cgroups.remove(); err != nil {
			errs = append(errs, err)
		} else {
			for _, d := range n.cgroups.dirs() {
				n.h.c.UnwatchCgroup(d)
			}
		}
	}
	n.api.Close()
	if n.ns != nil {
		errs = append(errs, n.ns.Delete())
		n.h.c.UnwatchNetns(n.ns.Name)
	}
	err := n.h.cs.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitFor polls check every 100 ms until it reports done, fails, or
// timeout passes; then it says what did not happen, and what logs says.
func waitFor(ctx context.Context, timeout time.Duration, what string, logs func() string, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not within %s:\n%s", what, timeout, tail(logs(), 40))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
