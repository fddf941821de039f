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

package node_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/node"
)

// nonRoot is the user the test's workload runs as, as the charts' managers
// do (distroless's nonroot).
const nonRoot = 65532

// buildImage compiles the program pkg (static, for this machine's
// architecture) and writes an image of it alone, its entrypoint, as a
// docker archive in dir, without a daemon or a registry.
func buildImage(dir, pkg, ref string) (node.Image, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return node.Image{}, err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return node.Image{}, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	program, err := os.ReadFile(bin)
	if err != nil {
		return node.Image{}, err
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	entry := "/" + filepath.Base(pkg)
	if err := tw.WriteHeader(&tar.Header{Name: entry[1:], Mode: 0o755, Size: int64(len(program)), ModTime: time.Unix(0, 0)}); err != nil {
		return node.Image{}, err
	}
	if _, err := tw.Write(program); err != nil {
		return node.Image{}, err
	}
	if err := tw.Close(); err != nil {
		return node.Image{}, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layer.Bytes())), nil
	})
	if err != nil {
		return node.Image{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return node.Image{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return node.Image{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = v1.Config{Entrypoint: []string{entry}, User: fmt.Sprint(nonRoot)}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return node.Image{}, err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return node.Image{}, err
	}
	archive := filepath.Join(dir, filepath.Base(pkg)+".tar")
	if err := tarball.WriteToFile(archive, tag, img); err != nil {
		return node.Image{}, err
	}
	return node.Image{Ref: ref, Archive: archive}, nil
}
