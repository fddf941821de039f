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

package testkit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/address-controller/test/cluster"
)

// Helm runs the repository's bin/helm (make helm) with args, its caches and
// configuration in a temporary folder of t's, and returns what it wrote to
// standard output, or an error carrying what it wrote to standard error.
// Without the binary, t fails at once.
func Helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	bin := filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no helm at %s: run make helm", bin)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String() + "\n" + stdout.String()))
	}
	return stdout.String(), nil
}
