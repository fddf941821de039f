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

package images

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/cozystack/address-controller/test/slot"
)

// built holds the archives of every image, written once for the package
// by the first test that needs them, in a folder TestMain removes.
var built struct {
	dir      string
	archives []Archive
	err      error
}

func TestMain(m *testing.M) {
	// Building the images compiles every manager.
	if err := slot.Take(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "images-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	built.dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the repository's root, seen from this package's folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// archives writes every image once, for this machine's architecture, and
// returns them; MetalLB's binaries come from METALLB_ASSETS when they are
// static there, as make images-local takes them.
func archives(t *testing.T) []Archive {
	t.Helper()
	if built.archives == nil && built.err == nil {
		start := time.Now()
		built.archives, built.err = Build(context.Background(), Options{
			Root: repoRoot(t), Dir: filepath.Join(built.dir, "all"),
			MetalLB: os.Getenv("METALLB_ASSETS"),
		})
		t.Logf("Build wrote %d archives in %s", len(built.archives), time.Since(start).Round(time.Second))
	}
	if built.err != nil {
		t.Fatalf("Build: %v", built.err)
	}
	return built.archives
}

// runs says how each image's binary shows that it runs: the arguments it is
// started with, and a piece of what it must print.
var runs = map[string]struct {
	args []string
	want string
}{
	"address-controller": {[]string{"--help"}, "-leader-elect"},
	"metallb-iad":        {[]string{"--help"}, "-placeholder-namespace"},
	"cilium-iad":         {[]string{"--help"}, "-placeholder-namespace"},
	"metallb-controller": {[]string{"--help"}, "-webhook-mode"},
	"metallb-speaker":    {[]string{"--help"}, "-node-name"},
	"pause":              {[]string{"--version"}, "pause"},
}

// TestArchives reads every archive back as containerd would import it: a
// valid image under its reference, for this platform, whose config starts
// the binary as the Dockerfile's image does, and whose one layer holds that
// binary, static and executable; extracted, the binary runs.
func TestArchives(t *testing.T) {
	all := archives(t)
	names := make([]string, 0, len(all))
	for _, a := range all {
		names = append(names, a.Image.Name)
	}
	want := []string{"address-controller", "metallb-iad", "cilium-iad", "metallb-controller", "metallb-speaker", "pause"}
	if !slices.Equal(names, want) {
		t.Fatalf("Build wrote the images %v, want %v", names, want)
	}
	for _, a := range all {
		t.Run(a.Image.Name, func(t *testing.T) {
			run, ok := runs[a.Image.Name]
			if !ok {
				t.Fatalf("no row in runs for image %s: say how its binary shows it runs", a.Image.Name)
			}
			if got := filepath.Join(built.dir, "all", a.Image.Name+".tar"); a.Path != got {
				t.Errorf("archive at %s, want %s", a.Path, got)
			}
			if st, err := os.Stat(a.Path); err != nil || st.Size() != a.Size {
				t.Fatalf("archive %s: stat %v, %v; Build said %d bytes", a.Path, st, err, a.Size)
			}
			img := readImage(t, a)
			if d, err := img.Digest(); err != nil || d.String() != a.Digest {
				t.Errorf("digest %v (%v), Build said %s", d, err, a.Digest)
			}
			checkConfig(t, img, a.Image)
			bin := checkLayer(t, img, a)

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, run.args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", a.Image.Entrypoint, run.args, err, out)
			}
			if !strings.Contains(string(out), run.want) {
				t.Errorf("%s %v printed no %q:\n%s", a.Image.Entrypoint, run.args, run.want, out)
			}
			t.Logf("%s: archive %.1f MiB, binary %.1f MiB, prebuilt %q",
				a.Ref, float64(a.Size)/(1<<20), float64(a.BinarySize)/(1<<20), a.Prebuilt)
		})
	}
}

// readImage reads the image archive a holds under its reference, as
// containerd imports it, and checks it is a valid image (digests, sizes,
// config and layers agree) tagged DefaultTag.
func readImage(t *testing.T, a Archive) v1.Image {
	t.Helper()
	tag, err := name.NewTag(a.Ref, name.StrictValidation)
	if err != nil {
		t.Fatalf("reference %q: %v", a.Ref, err)
	}
	if tag.TagStr() != DefaultTag {
		t.Errorf("reference %s, want the tag %s", a.Ref, DefaultTag)
	}
	img, err := tarball.ImageFromPath(a.Path, &tag)
	if err != nil {
		t.Fatalf("reading %s as %s: %v", a.Path, a.Ref, err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("%s is no valid image: %v", a.Path, err)
	}
	return img
}

// checkConfig checks the config of an image starts its binary as want says.
func checkConfig(t *testing.T, img v1.Image, want Image) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{want.Entrypoint}) || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q, command %q; want %q alone", c.Entrypoint, c.Cmd, want.Entrypoint)
	}
	if c.User != want.User {
		t.Errorf("user %q, want %q", c.User, want.User)
	}
	if c.WorkingDir != "/" {
		t.Errorf("working folder %q, want /", c.WorkingDir)
	}
	if !slices.ContainsFunc(c.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=/") }) {
		t.Errorf("environment %q sets no PATH", c.Env)
	}
}

// checkLayer checks that img has one layer holding the binary and the files
// around it, and returns the binary extracted into a temporary folder.
func checkLayer(t *testing.T, img v1.Image, a Archive) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()

	entry := strings.TrimPrefix(a.Image.Entrypoint, "/")
	bin := filepath.Join(t.TempDir(), entry)
	headers := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the layer: %v", err)
		}
		headers[h.Name] = h
		if h.Name != entry {
			continue
		}
		f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode).Perm())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}

	h, ok := headers[entry]
	if !ok {
		t.Fatalf("the layer has no %s; it has %v", entry, keys(headers))
	}
	if h.Typeflag != tar.TypeReg || h.Mode&0o111 != 0o111 || h.Uid != 0 || h.Gid != 0 {
		t.Errorf("%s: type %c, mode %o, owner %d:%d; want a file executable by all, owned by root",
			entry, h.Typeflag, h.Mode, h.Uid, h.Gid)
	}
	if h.Size != a.BinarySize || h.Size < 1<<20 {
		t.Errorf("%s is %d bytes; Build said %d, and a Go binary is above 1 MiB", entry, h.Size, a.BinarySize)
	}
	if err := checkStatic(bin, runtime.GOARCH); err != nil {
		t.Errorf("the binary in the image: %v", err)
	}
	if h := headers["tmp/"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode != 0o1777 {
		t.Errorf("the layer has no /tmp writable by all (sticky): %+v", h)
	}
	for _, f := range []string{"etc/passwd", "etc/group", "etc/nsswitch.conf"} {
		if h := headers[f]; h == nil || h.Typeflag != tar.TypeReg || h.Size == 0 {
			t.Errorf("the layer has no %s: %+v", f, h)
		}
	}
	return bin
}

func keys(m map[string]*tar.Header) []string {
	return slices.Sorted(maps.Keys(m))
}
