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
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cozystack/address-controller/test/slot"
)

// Service ranges of the local API server: dual-stack, each large enough for
// tens of thousands of Services (placeholders take a ClusterIP each), and
// both from ranges set aside for tests and private use (RFC 6598's shared
// address space, RFC 4193's unique local addresses), never a network a
// machine may be on.
const (
	ServiceCIDRv4 = "100.112.0.0/12"
	ServiceCIDRv6 = "fd00:10:96::/108"
)

// MetalLBNamespace is where the MetalLB controller reads its configuration.
const MetalLBNamespace = "metallb-system"

// Options choose the parts of a cluster.
type Options struct {
	// WithoutControllerManager skips kube-controller-manager: no garbage
	// collection, and deleted namespaces stay Terminating.
	WithoutControllerManager bool
	// WithoutMetalLB skips the MetalLB controller (its CRDs are still
	// installed).
	WithoutMetalLB bool
	// KeepDir leaves the cluster's folder (logs, etcd data) after Stop.
	// The environment variable CLUSTER_KEEP_DIR=1 does the same.
	KeepDir bool
	// WithCilium starts the Cilium operator with LB-IPAM (see StartCilium);
	// combine it with WithoutMetalLB.
	WithCilium bool
	// ExtraCRDDirs are folders of further CRDs to install beside this
	// project's and MetalLB's (a benchmark's own test kinds, say).
	ExtraCRDDirs []string
	// WithoutCRDs leaves this project's CRDs out, for a test that installs
	// them as a user does, with the core chart (MetalLB's are still
	// installed).
	WithoutCRDs bool
	// WithWorkloads runs what Pods on real nodes need (the node harness,
	// test/node, brings the nodes): kube-scheduler; kube-controller-manager's
	// workload controllers (Deployments, ReplicaSets, DaemonSets,
	// StatefulSets, Jobs, EndpointSlices, ServiceAccounts and the root CA
	// ConfigMap, node lifecycle, Pod garbage collection); and an API server
	// that admits Pods as a real cluster does (ServiceAccount admission,
	// Node authorization and NodeRestriction). It needs kube-scheduler in
	// KUBEBUILDER_ASSETS (`make node-tools`).
	WithWorkloads bool
}

// workloadControllers are the kube-controller-manager controllers
// Options.WithWorkloads adds.
var workloadControllers = []string{
	"deployment-controller", "replicaset-controller", "daemonset-controller", "statefulset-controller",
	"job-controller", "endpointslice-controller", "endpointslice-mirroring-controller",
	"serviceaccount-controller", "root-ca-certificate-publisher-controller",
	"node-lifecycle-controller", "taint-eviction-controller", "pod-garbage-collector-controller",
	"ttl-controller", "disruption-controller",
}

// Cluster is a running local control plane.
type Cluster struct {
	// Config authenticates as a member of system:masters.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Dir holds the cluster's logs, certificates and etcd data.
	Dir string
	// Assets are the binaries the cluster runs.
	Assets Assets

	opts      Options
	env       *envtest.Environment
	watchdog  *watchdog
	kcm       *process
	scheduler *process
	metallb   *process
	cilium    *process
	egress    *egress
	// metallbMetrics is the URL of the MetalLB controller's metrics.
	metallbMetrics string
}

// RunTests is a package's TestMain: it starts a cluster with opts, keeps it
// in *c while the package's tests run, stops it, and exits with their
// result.
func RunTests(m *testing.M, opts Options, c **Cluster) {
	started, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*c = started
	code := m.Run()
	_ = started.Stop()
	os.Exit(code)
}

// Start brings up a cluster. On error, everything started is stopped again.
func Start(opts Options) (c *Cluster, err error) {
	if err := slot.Take(); err != nil {
		return nil, err
	}
	assets, err := FindAssets()
	if err != nil {
		return nil, err
	}
	if opts.WithWorkloads {
		if _, err := os.Stat(assets.KubeScheduler()); err != nil {
			return nil, fmt.Errorf("%w (run `make node-tools` to build kube-scheduler)", err)
		}
	}
	w, err := startWatchdog()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "address-controller-cluster-")
	if err != nil {
		w.release()
		return nil, err
	}
	w.watchDir(dir)
	c = &Cluster{Dir: dir, Assets: assets, opts: opts, watchdog: w}
	defer func() {
		if err != nil {
			_ = c.Stop()
			c = nil
		}
	}()

	if err := c.startControlPlane(); err != nil {
		return c, err
	}
	if !opts.WithoutControllerManager {
		if err := c.startControllerManager(); err != nil {
			return c, err
		}
	}
	if opts.WithWorkloads {
		c.scheduler = newProcess("kube-scheduler", filepath.Join(assets.KubeDir, "kube-scheduler"), dir,
			"--kubeconfig", c.Kubeconfig,
			"--authentication-kubeconfig", c.Kubeconfig,
			"--authorization-kubeconfig", c.Kubeconfig,
			"--secure-port", "0",
			"--leader-elect=false",
		)
		if err := c.scheduler.start(w); err != nil {
			return c, err
		}
	}
	if err := c.ensureNamespace(MetalLBNamespace); err != nil {
		return c, err
	}
	if !opts.WithoutMetalLB {
		if err := c.StartMetalLB(); err != nil {
			return c, err
		}
	}
	if opts.WithCilium {
		if err := c.StartCilium(); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (c *Cluster) startControllerManager() error {
	controllers := []string{"garbage-collector-controller", "namespace-controller",
		"validatingadmissionpolicy-status-controller", "clusterrole-aggregation-controller"}
	var extra []string
	if c.opts.WithWorkloads {
		controllers = append(controllers, workloadControllers...)
		// The root CA publisher hands every namespace the CA that Pods
		// trust the API server by (kube-root-ca.crt).
		ca := filepath.Join(c.Dir, "ca.crt")
		if err := os.WriteFile(ca, c.Config.CAData, 0o600); err != nil {
			return err
		}
		extra = append(extra, "--root-ca-file", ca)
		// A node whose Lease has not been renewed for 16 s is NotReady
		// (the default is 50 s): the node harness's kubelets renew theirs
		// every 2 s, and its tests stop nodes.
		extra = append(extra, "--node-monitor-period=2s", "--node-monitor-grace-period=16s")
	}
	c.kcm = newProcess("kube-controller-manager", filepath.Join(c.Assets.KubeDir, "kube-controller-manager"), c.Dir,
		append([]string{
			"--kubeconfig", c.Kubeconfig,
			"--authentication-kubeconfig", c.Kubeconfig,
			"--authorization-kubeconfig", c.Kubeconfig,
			"--controllers", strings.Join(controllers, ","),
			"--secure-port", "0",
			"--leader-elect=false",
		}, extra...)...,
	)
	return c.kcm.start(c.watchdog)
}

// auditWrites is the API server's audit policy with CLUSTER_AUDIT=1: every
// write, with its request body (a patch's content), except events and
// leases; no reads.
const auditWrites = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources: [{group: "", resources: [events]}, {group: events.k8s.io}, {group: coordination.k8s.io}]
- level: Request
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

func (c *Cluster) startControlPlane() error {
	etcdLog, err := os.Create(filepath.Join(c.Dir, "etcd.log"))
	if err != nil {
		return err
	}
	apiLog, err := os.Create(filepath.Join(c.Dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	crds := append([]string{filepath.Join(c.Assets.MetalLBDir, "crds")}, c.opts.ExtraCRDDirs...)
	if !c.opts.WithoutCRDs {
		crds = append(crds, c.Assets.CRDDir)
	}
	c.env = &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              crds,
			ErrorIfPathMissing: true,
		},
		BinaryAssetsDirectory: c.Assets.KubeDir,
		// envtest gives etcd and kube-apiserver 20 s each to answer, which a
		// two-core machine starting three control planes and linking a test
		// binary at once has overrun; a binary that cannot start still fails,
		// later.
		ControlPlaneStartTimeout: 90 * time.Second,
	}
	etcd := &envtest.Etcd{DataDir: filepath.Join(c.Dir, "etcd"), Out: etcdLog, Err: etcdLog}
	c.env.ControlPlane.Etcd = etcd
	api := c.env.ControlPlane.GetAPIServer()
	api.CertDir = filepath.Join(c.Dir, "apiserver")
	api.Out, api.Err = apiLog, apiLog
	api.Configure().Set("service-cluster-ip-range", ServiceCIDRv4+","+ServiceCIDRv6)
	// The API server reaches a kubelet (logs, exec, port-forward) at its
	// node's InternalIP, never by resolving the node's name: no lookup
	// leaves the machine.
	api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
	if c.opts.WithWorkloads {
		// envtest switches ServiceAccount admission off; Pods on real
		// nodes need it (their token volume), and kubelets are authorised
		// as nodes.
		api.Configure().Disable("disable-admission-plugins")
		api.Configure().Set("enable-admission-plugins", "NodeRestriction")
		api.Configure().Set("authorization-mode", "Node,RBAC")
		// Webhooks, aggregated APIs and kubelets are reached through the
		// nodes (SetClusterDialer): the host routes to none of their
		// addresses.
		var config string
		if c.egress, config, err = startEgress(c.Dir); err != nil {
			return err
		}
		api.Configure().Set("egress-selector-config-file", config)
	}
	if os.Getenv("CLUSTER_AUDIT") == "1" {
		policy := filepath.Join(c.Dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditWrites), 0o600); err != nil {
			return err
		}
		api.Configure().Set("audit-policy-file", policy)
		api.Configure().Set("audit-log-path", filepath.Join(c.Dir, "audit.log"))
	}
	for _, d := range []string{etcd.DataDir, api.CertDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	// The cluster's own certificates, so that the serving one also names
	// the `kubernetes` Service's ClusterIPs and AdvertiseAddress, which
	// Pods on real nodes dial; envtest, finding them, makes none.
	ca, err := writeCertificates(api.CertDir)
	if err != nil {
		return err
	}
	api.CA = ca
	api.Configure().Set("service-account-key-file", filepath.Join(api.CertDir, saPublicFile))
	api.Configure().Set("service-account-signing-key-file", filepath.Join(api.CertDir, saKeyFile))
	// The `kubernetes` Service's endpoint: an address every node has and
	// the host has not (see AdvertiseAddress).
	api.Configure().Set("advertise-address", AdvertiseAddress)

	cfg, err := c.env.Start()
	// Whatever envtest managed to start is a child of this process: hand
	// every child to the watchdog before looking at the error.
	c.watchChildren()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	admin, err := c.env.AddUser(envtest.User{Name: "cluster-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return err
	}
	c.Config = admin.Config()
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	return os.WriteFile(c.Kubeconfig, kubeconfig, 0o600)
}

// watchChildren registers every child process (each leads its own group) with
// the watchdog.
func (c *Cluster) watchChildren() {
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == c.watchdog.cmd.Process.Pid {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the parenthesised command name: state, ppid, pgrp.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 3 || fields[1] != strconv.Itoa(self) || fields[2] != e.Name() {
			continue
		}
		c.watchdog.watchGroup(pid)
	}
}

// AddUser returns a config authenticating as a new user of the given groups.
func (c *Cluster) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, c.Config)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// KubeconfigFor writes a kubeconfig that authenticates as the admin and
// impersonates user (for example system:serviceaccount:ns:name), and returns
// its path.
func (c *Cluster) KubeconfigFor(user string, groups ...string) (string, error) {
	raw, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return "", err
	}
	// envtest writes the user entry last; impersonation sits beside the
	// client certificate.
	var b strings.Builder
	b.WriteString("    as: " + strconv.Quote(user) + "\n")
	if len(groups) > 0 {
		b.WriteString("    as-groups:\n")
		for _, g := range groups {
			b.WriteString("    - " + strconv.Quote(g) + "\n")
		}
	}
	text := string(raw)
	marker := "  user:\n"
	i := strings.LastIndex(text, marker)
	if i < 0 {
		return "", errors.New("unexpected kubeconfig layout: no user entry")
	}
	i += len(marker)
	text = text[:i] + b.String() + text[i:]
	path := filepath.Join(c.Dir, "kubeconfig-"+strings.NewReplacer(":", "-", "/", "-").Replace(user))
	return path, os.WriteFile(path, []byte(text), 0o600)
}

// Kubectl returns a command running the pinned kubectl against the cluster.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Assets.Kubectl(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	return cmd
}

// StartMetalLB starts the MetalLB controller and waits until it serves
// metrics.
func (c *Cluster) StartMetalLB() error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	c.metallb = newProcess("metallb-controller", filepath.Join(c.Assets.MetalLBDir, "controller"), c.Dir,
		"--kubeconfig", c.Kubeconfig,
		"--namespace", MetalLBNamespace,
		"--webhook-mode", "disabled",
		"--disable-cert-rotation",
		"--port", strconv.Itoa(port),
	)
	if err := c.metallb.start(c.watchdog); err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	c.metallbMetrics = url
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if !c.metallb.running() {
			return fmt.Errorf("the MetalLB controller exited; see %s", c.metallb.log)
		}
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the MetalLB controller did not serve %s within a minute; see %s", url, c.metallb.log)
}

// StopMetalLB stops the MetalLB controller gracefully.
func (c *Cluster) StopMetalLB() error { return c.metallb.stop() }

// KillMetalLB kills the MetalLB controller at once, as a crash would.
func (c *Cluster) KillMetalLB() error { return c.metallb.kill() }

// MetalLBPID is the process id of the running MetalLB controller, or 0 when
// it is not running. Benchmarks read its memory and CPU from /proc.
func (c *Cluster) MetalLBPID() int { return c.metallb.pid() }

// MetalLBMetricsURL is the plain-HTTP metrics endpoint of the MetalLB
// controller last started, or "" if it never was.
func (c *Cluster) MetalLBMetricsURL() string { return c.metallbMetrics }

// MetalLBLog is the path of the MetalLB controller's log.
func (c *Cluster) MetalLBLog() string { return filepath.Join(c.Dir, "metallb-controller.log") }

// EtcdURL is the client URL of the cluster's etcd (plain HTTP on the
// loopback): its /metrics and its JSON gateway (/v3/kv/range) answer there.
func (c *Cluster) EtcdURL() string {
	if c.env == nil || c.env.ControlPlane.Etcd == nil || c.env.ControlPlane.Etcd.URL == nil {
		return ""
	}
	return c.env.ControlPlane.Etcd.URL.String()
}

// Keep makes Stop leave the cluster's folder (logs, etcd data) in place, as
// Options.KeepDir does: a run that failed keeps its evidence.
func (c *Cluster) Keep() { c.opts.KeepDir = true }

// Stop stops every process and removes the cluster's folder.
func (c *Cluster) Stop() error {
	var errs []error
	if c.cilium != nil {
		errs = append(errs, c.cilium.stop())
	}
	if c.metallb != nil {
		errs = append(errs, c.metallb.stop())
	}
	if c.scheduler != nil {
		errs = append(errs, c.scheduler.stop())
	}
	if c.kcm != nil {
		errs = append(errs, c.kcm.stop())
	}
	if c.env != nil {
		errs = append(errs, c.env.Stop())
	}
	errs = append(errs, c.egress.close())
	if !c.opts.KeepDir && os.Getenv("CLUSTER_KEEP_DIR") != "1" {
		errs = append(errs, os.RemoveAll(c.Dir))
	}
	c.watchdog.release()
	return errors.Join(errs...)
}

func (c *Cluster) ensureNamespace(name string) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Ports handed to processes come from below Linux's default ephemeral
// range (32768-60999). A port of that range is free only until the kernel
// gives it to another process's outgoing connection or listener on port 0:
// with the test packages running in parallel, a manager started on a port
// FreePort had found free once failed with "address already in use".
const (
	portsFrom = 20000
	portsTo   = 32767
)

// handedOut are the ports FreePort has returned in this process: a port
// handed to a process that has not bound it yet looks free, and two ports
// for one manager (its metrics and its pprof) once came out the same.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a TCP port on the loopback interface that nothing listens
// on now and that it has not returned before in this process, for a process
// about to be started, outside the ephemeral range.
func FreePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	var last error
	for range 100 {
		port := portsFrom + rand.IntN(portsTo-portsFrom+1)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			last = err
			continue
		}
		_ = l.Close()
		handedOut.ports[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free port between %d and %d: %w", portsFrom, portsTo, last)
}
