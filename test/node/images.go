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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/images"
)

// nonRoot is the user a test's own workload runs as, as the charts'
// managers do (distroless's nonroot).
const nonRoot = 65532

// BuildImage compiles the program pkg, a test's own workload (static, for
// this machine's architecture), and writes an image of it, its entrypoint,
// as a docker archive in dir, without a daemon or a registry. test/images
// writes it, as it writes the images the project ships (FromArchive takes
// those): one way to write an archive.
func BuildImage(dir, pkg, ref string) (Image, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return Image{}, err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Image{}, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return Image{}, err
	}
	entry := "/" + filepath.Base(pkg)
	a, err := images.WriteArchive(filepath.Join(dir, filepath.Base(pkg)+".tar"), tag,
		images.Image{Name: filepath.Base(pkg), Entrypoint: entry, User: fmt.Sprint(nonRoot)}, bin, runtime.GOARCH)
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: ref, Archive: a.Path}, nil
}

// FromArchive is the image in an archive test/images wrote.
func FromArchive(a images.Archive) Image { return Image{Ref: a.Ref, Archive: a.Path} }
