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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/e2e/harness"
)

func main() {
	down := flag.Bool("down", false, "stop a running demo and remove what it left")
	flag.Parse()
	root, err := cluster.RepoRoot()
	if err == nil {
		state := filepath.Join(root, "bin", "demo")
		if *down {
			err = stopRunning(state)
		} else {
			err = run(state)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(state string) error {
	if err := stopRunning(state); err != nil {
		return err
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(state, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	step("Starting a local control plane (etcd, kube-apiserver, kube-controller-manager), the MetalLB controller,\n" +
		"    both Helm charts in order, and both managers as their charts' ServiceAccounts")
	h, err := harness.StartLocal(ctx)
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping the cluster and both managers")
		_ = h.Close()
		_ = os.RemoveAll(state)
	}()
	kubeconfig := filepath.Join(state, "kubeconfig")
	if raw, err := os.ReadFile(h.Kubeconfig()); err == nil {
		_ = os.WriteFile(kubeconfig, raw, 0o600)
	}
	d := &demo{h: h, kubeconfig: kubeconfig}
	x, err := d.flagship(ctx)
	if err != nil {
		return err
	}
	stopWire, err := d.onTheWire(ctx, h, x)
	if err != nil {
		return err
	}
	defer stopWire()

	fmt.Printf(`
The cluster keeps running. In another terminal:

    export KUBECONFIG=%s
    %s get ipam -A

Press Ctrl-C to stop it (or run make demo-down).
`, kubeconfig, h.Kubectl())
	<-ctx.Done()
	return nil
}

type demo struct {
	h          harness.Harness
	kubeconfig string
}

// flagship walks the flagship flow: a claim gets an address that a
// placeholder holds; Service A carries it; deleting A returns it to the
// hold; Service B gets the same address.
func (d *demo) flagship(ctx context.Context) (string, error) {
	step("An admin creates a class served by the MetalLB driver, and makes it the default")
	if err := d.apply(ctx, `apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClass
metadata:
  name: public
  annotations:
    ipaddressclass.local.sdn.cozystack.io/is-default-class: "true"
spec:
  provisioner: metallb.drivers.local.sdn.cozystack.io
  reclaimPolicy: Retain
  parameters:
    addresses: ["203.0.113.0/24"]
    avoidBuggyIPs: true
`); err != nil {
		return "", err
	}
	if _, err := d.waitFor(ctx, "the driver to render the class into MetalLB's configuration", "get",
		"ipaddressclasses.local.sdn.cozystack.io", "public", "-o", `jsonpath={.status.conditions[?(@.type=="Rendered")].status}`); err != nil {
		return "", err
	}
	d.show(ctx, "get", "ipaddressclasses.local.sdn.cozystack.io")
	d.show(ctx, "-n", "metallb-system", "get", "ipaddresspools,l2advertisements")

	step("A tenant claims an address")
	if err := d.apply(ctx, `apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: web, namespace: demo}
spec: {}
`); err != nil {
		return "", err
	}
	x, err := d.waitFor(ctx, "the claim to be Bound", "-n", "demo", "get", "ipaddressclaim", "web", "-o", "jsonpath={.status.addresses[0].address}")
	if err != nil {
		return "", err
	}
	d.show(ctx, "-n", "demo", "get", "ipaddressclaims.local.sdn.cozystack.io")
	d.show(ctx, "get", "ipaddresses.local.sdn.cozystack.io")
	fmt.Printf("    %s is reserved: a placeholder Service holds it in MetalLB's books.\n", x)
	d.show(ctx, "-n", d.h.PlaceholderNamespace(), "get", "services")

	step("Service A names the claim and gets " + x)
	if err := d.apply(ctx, service("a")); err != nil {
		return "", err
	}
	if _, err := d.waitFor(ctx, "Service A to carry "+x, "-n", "demo", "get", "service", "a", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}"); err != nil {
		return "", err
	}
	d.show(ctx, "-n", "demo", "get", "services")
	d.show(ctx, "get", "ipaddresses.local.sdn.cozystack.io")

	step("Service A is deleted: the address stays the tenant's, held again")
	d.show(ctx, "-n", "demo", "delete", "service", "a")
	if _, err := d.waitFor(ctx, "the hold to return", "-n", d.h.PlaceholderNamespace(), "get", "services",
		"-l", "local.sdn.cozystack.io/placeholder=hold", "-o", "jsonpath={.items[*].status.loadBalancer.ingress[*].ip}"); err != nil {
		return "", err
	}
	d.show(ctx, "-n", "demo", "get", "ipaddressclaims.local.sdn.cozystack.io")
	d.show(ctx, "get", "ipaddresses.local.sdn.cozystack.io")

	step("Service B names the same claim")
	if err := d.apply(ctx, service("b")); err != nil {
		return "", err
	}
	got, err := d.waitFor(ctx, "Service B to carry an address", "-n", "demo", "get", "service", "b", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}")
	if err != nil {
		return "", err
	}
	d.show(ctx, "-n", "demo", "get", "services")
	if got != x {
		return "", fmt.Errorf("service B got %s, not %s", got, x)
	}
	fmt.Printf("\n    The same address, %s, came back on Service B.\n", x)
	return x, nil
}

func service(name string) string {
	return `apiVersion: v1
kind: Service
metadata:
  name: ` + name + `
  namespace: demo
  annotations:
    local.sdn.cozystack.io/ip-address-claim: web
spec:
  type: LoadBalancer
  allocateLoadBalancerNodePorts: false
  selector: {app: web}
  ports: [{port: 80}]
`
}

func step(s string) { fmt.Printf("\n==> %s\n", s) }

func (d *demo) kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, d.h.Kubectl(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+d.kubeconfig)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// apply shows a manifest and applies it.
func (d *demo) apply(ctx context.Context, manifest string) error {
	fmt.Printf("\n$ kubectl apply -f - <<EOF\n%sEOF\n", manifest)
	out, err := d.kubectl(ctx, manifest, "apply", "-f", "-")
	fmt.Print(indent(out))
	return err
}

// show runs a kubectl command and prints it with its output.
func (d *demo) show(ctx context.Context, args ...string) {
	fmt.Printf("\n$ kubectl %s\n", strings.Join(args, " "))
	out, _ := d.kubectl(ctx, "", args...)
	fmt.Print(indent(out))
}

// waitFor runs a kubectl query until it prints something, and returns it.
func (d *demo) waitFor(ctx context.Context, what string, args ...string) (string, error) {
	fmt.Printf("    waiting for %s...\n", what)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if out, err := d.kubectl(ctx, "", args...); err == nil && strings.TrimSpace(out) != "" {
			return strings.TrimSpace(out), nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return "", errors.New("timed out waiting for " + what)
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// stopRunning stops a demo that is still running and waits for it to clean
// up, then removes its state.
func stopRunning(state string) error {
	raw, err := os.ReadFile(filepath.Join(state, "pid"))
	if err != nil {
		return os.RemoveAll(state)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
		fmt.Printf("Stopping the running demo (pid %d)...\n", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 600 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("the demo (pid %d) did not stop within a minute", pid)
		}
	}
	return os.RemoveAll(state)
}
