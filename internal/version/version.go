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

// Package version says which build a binary is: the release it was cut
// from (set by the linker, -X .../internal/version.version=vX.Y.Z, as the
// Makefile and the Dockerfile do), else what Go recorded of the module and
// the commit it was built from.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release, set at link time; empty in a plain go build.
var version string

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the release (vX.Y.Z), or "(devel)" for a build from a
	// working tree.
	Version string `json:"version"`
	// Commit is the commit built from, when Go recorded it ("" when not),
	// with "-dirty" when the working tree had changes.
	Commit string `json:"commit,omitempty"`
	// GoVersion and Platform say which Go built it, for which platform.
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get reads the build's information.
func Get() Info {
	info := Info{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		if info.Version == "" {
			info.Version = "(unknown)"
		}
		return info
	}
	if info.Version == "" {
		info.Version = build.Main.Version
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	dirty := false
	for _, s := range build.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if info.Commit != "" && dirty {
		info.Commit += "-dirty"
	}
	return info
}

// Line is the one line --version prints: "<binary> <version> (commit
// <commit>, <go version>, <platform>)".
func (i Info) Line(binary string) string {
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("%s %s (commit %s, %s, %s)", binary, i.Version, commit, i.GoVersion, i.Platform)
}
