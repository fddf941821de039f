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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/address-controller/test/netns"
)

// process is a child the cluster started itself (envtest starts etcd and the
// API server).
type process struct {
	name string
	path string
	args []string
	// env is added to the test's own environment.
	env  []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func newProcess(name, path, logDir string, args ...string) *process {
	return &process{name: name, path: path, args: args, log: filepath.Join(logDir, name+".log")}
}

// start runs the process in its own process group, logging to its log file,
// and registers the group with the watchdog.
func (p *process) start(w *watchdog) error {
	if p.running() {
		return fmt.Errorf("%s is already running", p.name)
	}
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Pdeathsig covers the common death of the parent; the watchdog covers
	// the rest (Pdeathsig follows the thread that forked, not the process).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	w.watchGroup(cmd.Process.Pid)
	p.cmd = cmd
	p.done = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return nil
}

// running reports whether the process was started and has not exited. A
// nil process (an optional one the test never asked for, such as the
// MetalLB controller or the Cilium operator) never runs: stopping or
// killing it is no error.
func (p *process) running() bool {
	if p == nil || p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// pid is the process id while the process runs, or 0.
func (p *process) pid() int {
	if !p.running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop terminates the process group, politely first.
func (p *process) stop() error {
	if !p.running() {
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New(p.name + " did not exit after SIGKILL")
	}
}

// kill ends the process group at once, as a crash would.
func (p *process) kill() error {
	if !p.running() {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New(p.name + " did not exit after SIGKILL")
	}
}

// Process is a program a test runs beside the cluster, such as a manager
// binary. The cluster's watchdog kills it if the test process dies.
type Process struct{ p *process }

// StartProcess runs the binary at path with args, logging to <Dir>/<name>.log.
func (c *Cluster) StartProcess(name, path string, args ...string) (*Process, error) {
	return c.StartProcessWithEnv(name, path, nil, args...)
}

// StartProcessWithEnv is StartProcess with env ("KEY=value") added to the
// test's own environment, for the process alone.
func (c *Cluster) StartProcessWithEnv(name, path string, env []string, args ...string) (*Process, error) {
	p := newProcess(name, path, c.Dir, args...)
	p.env = env
	if err := p.start(c.watchdog); err != nil {
		return nil, err
	}
	return &Process{p: p}, nil
}

// NodeOptions describe a Node object a test bed registers for a node it runs
// in a network namespace of its own (test/node's kubelets, test/wire's
// speakers).
type NodeOptions struct {
	// Name of the Node object (a DNS label).
	Name string
	// Labels of the Node object, for the classes' node selectors.
	Labels map[string]string
}

// Bed is what a test bed of network namespaces beside the control plane
// starts from (test/node, test/wire).
type Bed struct {
	// APIPort is the API server's loopback port, which the bed's namespaces
	// reach through a forward of their own.
	APIPort string
	// Clientset is a cluster-admin client.
	Clientset kubernetes.Interface
	// ID is prefix and random hex: it names the bed's namespaces and links
	// apart from those of another bed on the same machine.
	ID string
}

// NewBed gives a new test bed its API port, client and ID (prefix and
// randomBytes of hex).
func (c *Cluster) NewBed(prefix string, randomBytes int) (Bed, error) {
	port, err := netns.LoopbackPort(c.Config.Host)
	if err != nil {
		return Bed{}, err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return Bed{}, err
	}
	suffix := make([]byte, randomBytes)
	_, _ = rand.Read(suffix)
	return Bed{APIPort: port, Clientset: cs, ID: prefix + hex.EncodeToString(suffix)}, nil
}

// WatchNetns has the cluster's watchdog delete the network namespace name
// (made with `ip netns add`) if the test process dies before deleting it;
// UnwatchNetns withdraws that once the test deleted it itself.
func (c *Cluster) WatchNetns(name string)   { c.watchdog.watchNetns(name) }
func (c *Cluster) UnwatchNetns(name string) { c.watchdog.unwatchNetns(name) }

// AddNetns makes the network namespace name, watched from the start: the
// watchdog deletes it if the test process dies first, and gives up on it
// again if it could not be made.
func (c *Cluster) AddNetns(name string) (*netns.Namespace, error) {
	c.WatchNetns(name)
	n, err := netns.Add(name)
	if err != nil {
		c.UnwatchNetns(name)
		return nil, err
	}
	return n, nil
}

// WatchCgroup has the cluster's watchdog kill every process in the cgroup
// folder dir (a path under /sys/fs/cgroup) and below it, and remove them,
// if the test process dies first: a node's containers are no children of
// the test. UnwatchCgroup withdraws that once the test removed them itself.
func (c *Cluster) WatchCgroup(dir string)   { c.watchdog.watchCgroup(dir) }
func (c *Cluster) UnwatchCgroup(dir string) { c.watchdog.unwatchCgroup(dir) }

// Stop sends SIGTERM and waits for the process to exit, killing it after ten
// seconds.
func (p *Process) Stop() error { return p.p.stop() }

// Kill ends the process at once, as a crash would.
func (p *Process) Kill() error { return p.p.kill() }

// PID is the process id, or 0 once the process has exited. Benchmarks read
// its memory and CPU from /proc/<pid>.
func (p *Process) PID() int { return p.p.pid() }

// Running reports whether the process has not exited.
func (p *Process) Running() bool { return p.p.running() }

// ExitCode is the exit code of a process that has exited, or -1.
func (p *Process) ExitCode() int {
	if p.p.cmd == nil || p.p.running() {
		return -1
	}
	return p.p.cmd.ProcessState.ExitCode()
}

// Log returns what the process has written so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.p.log)
	return string(b)
}

// GoBuild compiles the package pkg (a path relative to the repository root,
// such as ./cmd/address-controller) into dir and returns the binary's path.
func GoBuild(pkg, dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}
