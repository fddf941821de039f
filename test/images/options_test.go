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
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBuildRefusesBadOptions checks that each bad option fails Build with
// an error naming it, before anything is built or written.
func TestBuildRefusesBadOptions(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no root", Options{}, "root and the archives' folder must be set"},
		{"not the repository", Options{Root: t.TempDir()}, "is not the root of github.com/cozystack/address-controller"},
		{"unknown image", Options{Root: root, Only: []string{"pause", "nginx"}}, `no image "nginx"; the images are address-controller,`},
		{"unknown architecture", Options{Root: root, Arch: "vax"}, `architecture "vax": images are built for one of amd64, arm,`},
		{"bad tag", Options{Root: root, Tag: "two words"}, `image address-controller: the tag "two words"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if tc.o.Dir == "" {
				tc.o.Dir = dir
			}
			_, err := Build(t.Context(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v; want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("Build made %s although it failed: %v", dir, err)
			}
		})
	}
}

// TestWriteArchiveRefusesUnfitBinaries checks that a binary that cannot run
// in an image with nothing else in it, or not on the image's platform, is
// refused with the reason.
func TestWriteArchiveRefusesUnfitBinaries(t *testing.T) {
	tag, err := name.NewTag("example.test/unfit:" + DefaultTag)
	if err != nil {
		t.Fatal(err)
	}
	pause := imageNamed(t, "pause")
	// A program linked against the C library, as Debian builds its own.
	dynamic, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	other := "arm64"
	if runtime.GOARCH == other {
		other = "amd64"
	}
	foreign := t.TempDir()
	if err := goBuild(t.Context(), repoRoot(t), foreign, other, "-s -w", "./test/images/pause"); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, binary, want string }{
		{"dynamically linked", dynamic, "is linked dynamically (it needs a loader): build it with CGO_ENABLED=0"},
		{"another architecture", filepath.Join(foreign, "pause"), "is built for " + machines[other].String() + ", not for " + runtime.GOARCH},
		{"not a program", text, "is not an ELF executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "image.tar")
			_, err := WriteArchive(p, tag, pause, tc.binary, runtime.GOARCH)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteArchive: %v; want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("WriteArchive left %s although it failed: %v", p, err)
			}
		})
	}
}

// TestBuildIsReproducible writes the pause image twice and checks the two
// archives are the same bytes, and that an image for another architecture
// is built from this one and says so in its config.
func TestBuildIsReproducible(t *testing.T) {
	root := repoRoot(t)
	written := make([][]byte, 0, 2)
	for range 2 {
		as, err := Build(t.Context(), Options{Root: root, Dir: t.TempDir(), Only: []string{"pause"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(as[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, b)
	}
	if !bytes.Equal(written[0], written[1]) {
		t.Errorf("two builds of the pause image differ (%d and %d bytes)", len(written[0]), len(written[1]))
	}

	other := "arm64"
	if runtime.GOARCH == other {
		other = "amd64"
	}
	as, err := Build(t.Context(), Options{Root: root, Dir: t.TempDir(), Arch: other, Only: []string{"pause"}})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(as[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(as[0].Path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != other {
		t.Errorf("an image built for %s says its platform is %s/%s", other, cf.OS, cf.Architecture)
	}
}

// imageNamed is the image of Images called n.
func imageNamed(t *testing.T, n string) Image {
	t.Helper()
	for _, img := range Images() {
		if img.Name == n {
			return img
		}
	}
	t.Fatalf("no image %s", n)
	return Image{}
}
