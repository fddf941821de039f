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

package scaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/address-controller/test/cluster"

	"github.com/cozystack/address-controller/test/slot"
)

// TestKubebuilderCreatesAnAPIAndController runs `kubebuilder create api` in a
// copy of the repository and checks that the result builds: the PROJECT file,
// the markers and the layout are what the CLI expects.
func TestKubebuilderCreatesAnAPIAndController(t *testing.T) {
	// Compiling the scaffolded project keeps both cores busy for a minute.
	if err := slot.Take(); err != nil {
		t.Fatal(err)
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubebuilder := filepath.Join(root, "bin", "kubebuilder")
	if _, err := os.Stat(kubebuilder); err != nil {
		t.Fatalf("no kubebuilder at %s: run make kubebuilder", kubebuilder)
	}
	copyDir := t.TempDir()
	files, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("listing the repository's files: %v", err)
	}
	for f := range strings.FieldsSeq(string(files)) {
		if err := copyFile(filepath.Join(root, f), filepath.Join(copyDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = copyDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run(kubebuilder, "create", "api", "--group", "local", "--version", "v1alpha1", "--kind", "Widget",
		"--resource", "--controller", "--make=false")
	for _, f := range []string{"api/local/v1alpha1/widget_types.go", "internal/controller/local/widget_controller.go"} {
		if _, err := os.Stat(filepath.Join(copyDir, f)); err != nil {
			t.Errorf("kubebuilder did not scaffold %s", f)
		}
	}
	// The copy reuses the tools already built, where they are.
	run("make", "generate", "manifests", "LOCALBIN="+filepath.Join(root, "bin"))
	run("go", "build", "./...")
	run("go", "vet", "./internal/controller/...")
}

func copyFile(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // deleted in the working tree
		}
		return err
	}
	if info.IsDir() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, raw, info.Mode().Perm())
}
