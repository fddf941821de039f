//go:build node

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

package shipped_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/images"
	"github.com/cozystack/address-controller/test/node"
	"github.com/cozystack/address-controller/test/testkit"
)

// The images the tests install, by test/images' names: the managers,
// MetalLB's, and the sandbox every Pod's runs beside.
const (
	coreImage              = "address-controller"
	driverImage            = "metallb-iad"
	metallbControllerImage = "metallb-controller"
	metallbSpeakerImage    = "metallb-speaker"
	pauseImage             = "pause"
)

// helloRef is the tests' own workload (test/node/internal/hello), behind
// the Services they give addresses; the registry does not exist.
const helloRef = "registry.invalid/node-harness/hello:test"

var (
	root     string
	c        *cluster.Cluster
	nodes    *node.Harness
	cs       kubernetes.Interface
	kit      *testkit.Kit
	watcher  client.WithWatch
	helm     harness.Helm
	archives = map[string]images.Archive{}
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	os.Exit(testkit.Exit(run(m)))
}

func run(m *testing.M) (int, error) {
	ctx := context.Background()
	var err error
	if root, err = cluster.RepoRoot(); err != nil {
		return 0, err
	}
	if err := node.CheckRequirements(); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "node-shipped-images-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	began := time.Now()
	built, err := images.Build(ctx, images.Options{
		Root: root, Dir: dir, MetalLB: os.Getenv("METALLB_ASSETS"),
		Only: []string{coreImage, driverImage, metallbControllerImage, metallbSpeakerImage, pauseImage},
	})
	if err != nil {
		return 0, err
	}
	hello, err := node.BuildImage(dir, "./test/node/internal/hello", helloRef)
	if err != nil {
		return 0, err
	}
	fmt.Printf("Wrote %d images in %s\n", len(built), time.Since(began).Round(time.Millisecond))
	for _, a := range built {
		archives[a.Image.Name] = a
		fmt.Printf("  %s: %.1f MiB (binary %.1f MiB)\n", a.Ref, mib(a.Size), mib(a.BinarySize))
	}

	// This project's CRDs come with the core chart, as on a new cluster.
	if c, err = cluster.Start(cluster.Options{WithWorkloads: true, WithoutMetalLB: true, WithoutCRDs: true}); err != nil {
		return 0, err
	}
	defer func() { _ = c.Stop() }()
	if nodes, err = node.StartTestNodes(ctx, c, node.FromArchive(archives[pauseImage])); err != nil {
		return 0, err
	}
	defer func() {
		if err := nodes.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the nodes:", err)
		}
	}()
	toImport := []string{hello.Archive}
	for name, a := range archives {
		if name != pauseImage {
			toImport = append(toImport, a.Path)
		}
	}
	for _, archive := range toImport {
		if err := nodes.ImportImage(ctx, archive); err != nil {
			return 0, err
		}
	}

	if cs, err = kubernetes.NewForConfig(c.Config); err != nil {
		return 0, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return 0, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return 0, err
	}
	if watcher, err = client.NewWithWatch(c.Config, client.Options{Scheme: scheme}); err != nil {
		return 0, err
	}
	kit = testkit.New(watcher).Tidy(testkit.Tidying{Within: 2 * time.Minute})
	helm = harness.Helm{Binary: filepath.Join(root, "bin", "helm"), Kubeconfig: c.Kubeconfig, Home: filepath.Join(c.Dir, "helm")}
	return m.Run(), nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
