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

package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/address-controller/test/slot"
)

func TestLineNamesEveryPart(t *testing.T) {
	i := Info{Version: "v1.2.3", Commit: "abc123", GoVersion: "go1.26.0", Platform: "linux/arm64"}
	if got, want := i.Line("metallb-iad"), "metallb-iad v1.2.3 (commit abc123, go1.26.0, linux/arm64)"; got != want {
		t.Fatalf("Line() = %q, want %q", got, want)
	}
	i.Commit = ""
	if got := i.Line("metallb-iad"); !strings.Contains(got, "(commit unknown,") {
		t.Fatalf("a build with no recorded commit says so, got %q", got)
	}
}

func TestGetSaysDevelWithoutARelease(t *testing.T) {
	if version != "" {
		t.Fatalf("the test binary was linked with a release %q", version)
	}
	if got := Get().Version; got == "" {
		t.Fatal("a build without a release reports no version at all")
	}
}

// TestEveryBinaryReportsItsRelease builds the three managers and the kubectl
// plugin the way the Makefile and the Dockerfile do, with the release set at
// link time, and runs each with --version.
func TestEveryBinaryReportsItsRelease(t *testing.T) {
	// Linking four managers keeps both cores busy.
	if err := slot.Take(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	binaries := []string{"address-controller", "metallb-iad", "cilium-iad", "kubectl-ipam"}
	args := make([]string, 0, 5+len(binaries))
	args = append(args, "build", "-ldflags", "-X "+linkName+"=v9.8.7", "-o", dir+string(filepath.Separator))
	for _, b := range binaries {
		args = append(args, "../../cmd/"+b)
	}
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, b := range binaries {
		out, err := exec.Command(filepath.Join(dir, b), "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", b, err, out)
		}
		want := regexp.MustCompile(`^` + regexp.QuoteMeta(b) + ` v9\.8\.7 \(commit ([0-9a-f]+(-dirty)?|unknown), go[0-9.]+\S*, linux/[a-z0-9]+\)\n$`)
		if !want.Match(out) {
			t.Errorf("%s --version printed %q", b, out)
		}
	}
}

// TestTheMakefileLinksTheRelease: the Makefile and the Dockerfile set the
// variable this package reads.
func TestTheMakefileLinksTheRelease(t *testing.T) {
	for _, f := range []string{"../../Makefile", "../../Dockerfile"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), linkName+"=") {
			t.Errorf("%s does not set %s at link time", f, linkName)
		}
	}
}

const linkName = "github.com/cozystack/address-controller/internal/version.version"
