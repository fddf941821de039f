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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/images"
	"github.com/cozystack/address-controller/test/node"
)

// nonRoot is the user the test's workload runs as, as the charts' managers
// do (distroless's nonroot).
const nonRoot = 65532

// buildImage compiles the program pkg (static, for this machine's
// architecture) and writes an image of it, its entrypoint, as a docker
// archive in dir, without a daemon or a registry. test/images writes it,
// as it writes the managers' images: one way to write an archive.
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
	tag, err := name.NewTag(ref)
	if err != nil {
		return node.Image{}, err
	}
	entry := "/" + filepath.Base(pkg)
	a, err := images.WriteArchive(filepath.Join(dir, filepath.Base(pkg)+".tar"), tag,
		images.Image{Name: filepath.Base(pkg), Entrypoint: entry, User: fmt.Sprint(nonRoot)}, bin, runtime.GOARCH)
	if err != nil {
		return node.Image{}, err
	}
	return node.Image{Ref: ref, Archive: a.Path}, nil
}
