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

// Package gitarchive writes files as an earlier commit of this repository
// had them, for the tests that start from an earlier release: the upgrade
// tests install its charts and run its managers.
package gitarchive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Extract writes paths (the whole tree if none) as they were at commit in
// the repository at root into dir, regular files only, keeping whether each
// is executable.
func Extract(ctx context.Context, root, commit, dir string, paths ...string) error {
	if err := exec.CommandContext(ctx, "git", "-C", root, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		return fmt.Errorf("commit %s is not in this clone: fetch the history "+
			"(git fetch --unshallow; in CI, actions/checkout with fetch-depth: 0)", commit)
	}
	var archive, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root, "archive", "--format=tar", commit}, paths...)...)
	cmd.Stdout, cmd.Stderr = &archive, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git archive %s %s: %w\n%s", commit, strings.Join(paths, " "), err, stderr.String())
	}
	files := tar.NewReader(&archive)
	for {
		h, err := files.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the archive of %s: %w", commit, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		data, err := io.ReadAll(files)
		if err != nil {
			return fmt.Errorf("reading %s from the archive of %s: %w", h.Name, commit, err)
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			return err
		}
	}
}
