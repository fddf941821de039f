//go:build e2e

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

// Package e2e holds the end-to-end specs: user stories from the operating
// manual and the driver's README, driven only through the API, as an admin or
// a tenant would, against a cluster a harness hands over (see
// test/e2e/harness). Run them with make test-e2e (local harness) or make
// test-e2e-kind.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
)

var harnessName = flag.String("harness", os.Getenv("E2E_HARNESS"), "the harness: local (default) or kind")

var (
	h   harness.Harness
	kit *testkit.Kit
	// found is what the cluster held before the first spec.
	found testkit.Inventory
)

const (
	timeout = 60 * time.Second
	tick    = 200 * time.Millisecond
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "address-controller end-to-end")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	h, err = harness.New(ctx, *harnessName)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(h.Config(), client.Options{Scheme: manager.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	kit = testkit.New(c)
	found, err = kit.Inventory(ctx, sights())
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(10*time.Minute))

// logged is what a harness that runs the managers itself can show of their
// logs (the local one).
type logged interface {
	Log(m harness.Manager) string
}

// logsKept bounds the lines of each manager's log a failed spec shows.
const logsKept = 400

// A failed spec shows what the managers logged while it ran, so that a
// failure in CI can be read without rerunning it.
var _ = JustBeforeEach(func() {
	l, ok := h.(logged)
	if !ok {
		return
	}
	from := map[harness.Manager]int{}
	for _, m := range []harness.Manager{harness.Core, harness.Driver} {
		from[m] = len(l.Log(m))
	}
	DeferCleanup(func() {
		if !CurrentSpecReport().Failed() {
			return
		}
		for m, at := range from {
			text := l.Log(m)
			if at > len(text) { // the log was started again
				at = 0
			}
			lines := strings.Split(strings.TrimRight(text[at:], "\n"), "\n")
			if len(lines) > logsKept {
				lines = lines[len(lines)-logsKept:]
			}
			GinkgoWriter.Printf("--- %s, the last %d lines it logged during this spec ---\n%s\n", m, len(lines), strings.Join(lines, "\n"))
		}
	})
})

var _ = AfterSuite(func(ctx SpecContext) {
	if h == nil {
		return
	}
	DeferCleanup(func() { Expect(h.Close()).To(Succeed()) })
	left, err := kit.Leaks(ctx, found, sights(), 10*time.Second)
	// What was left first: Leaks may also report its last look's timeout.
	Expect(left).To(BeEmpty(), "the specs left these behind: each spec removes what it made")
	Expect(err).NotTo(HaveOccurred())
})

// kubectl runs kubectl against the cluster, as an admin would, and returns
// its combined output.
func kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.Kubectl(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.Kubeconfig())
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), err
}

// apply applies YAML with kubectl.
func apply(ctx context.Context, yaml string) {
	GinkgoHelper()
	out, err := kubectl(ctx, yaml, "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), out)
}

// shell runs a bash script with kubectl on PATH and KUBECONFIG set.
func shell(ctx context.Context, script string) (string, error) {
	cmd := exec.CommandContext(ctx, "/bin/bash", "-euo", "pipefail", "-c", script)
	dir := h.Kubectl()[:strings.LastIndex(h.Kubectl(), "/")+1]
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.Kubeconfig(), "PATH="+dir+":"+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func clientKey(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }

func testkitAddress(phase v1alpha1.IPAddressPhase, reason, claim string) testkit.AddressState {
	return testkit.AddressState{Phase: phase, Reason: reason, Claim: claim}
}
