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

// Command aligntools keeps the suite (go.mod) and the tool modules whose
// builds compile Kubernetes' libraries too (hack/tools/kube, hack/tools/helm)
// at one version of every module two of them compile: the newest any of
// them needs.
//
// Go's build cache keys a compiled package on its flags and on what its
// dependencies compiled to, so client-go compiled for kube-apiserver serves
// vet, helm and the test binaries only if client-go and everything below it
// are at the same versions in each build. From empty caches that saves
// compiling Kubernetes' libraries three times
// (docs/development.md, "Building from empty caches").
//
// Without flags it raises every module that is behind to that version (go
// get, then go mod tidy). With -check it
// changes nothing and exits 1 if any module differs.
//
//	go run ./hack/aligntools          # make align-tools
//	go run ./hack/aligntools -check
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// build is a module and the packages make test builds from it, with the
// tags it builds them with.
type build struct {
	Dir      string // relative to the repository
	Tags     string
	Packages []string
}

// builds are the suite and the tools make test builds after the control
// plane's build (TEST_TOOLS in the Makefile), which compile Kubernetes'
// libraries. The Cilium operator is not one of them: v1.20.2 does not
// compile against client-go v0.37 (its clientset's Discovery method no
// longer matches kubernetes.Interface).
var builds = []build{
	{Dir: ".", Tags: "e2e,cilium,node", Packages: []string{"./..."}},
	{Dir: "hack/tools/kube", Packages: []string{
		"k8s.io/kubernetes/cmd/kube-apiserver",
		"k8s.io/kubernetes/cmd/kube-controller-manager",
		"k8s.io/kubernetes/cmd/kubectl",
	}},
	{Dir: "hack/tools/helm", Packages: []string{"helm.sh/helm/v3/cmd/helm"}},
}

// version is the version of a module a build compiles: the one it requires
// (the label Go's build cache keys the module's packages on, under
// -trimpath) and, if it replaces the module, the version it compiles instead.
type version struct {
	Required string
	Replaced string // "" when not replaced by another version
}

// compiled is the version whose code the build compiles.
func (v version) compiled() string { return cmp.Or(v.Replaced, v.Required) }

func (v version) String() string {
	if v.Replaced == "" {
		return v.Required
	}
	return v.Required + " => " + v.Replaced
}

// difference is one module a build compiles at an older version than
// another build does, or under another label.
type difference struct {
	Dir    string
	Module string
	Have   version
	Want   string
}

func (d difference) String() string {
	return fmt.Sprintf("%s: %s is %s, another build compiles %s", d.Dir, d.Module, d.Have, d.Want)
}

// differences lists, by build and module, each module that two builds
// compile and that a build does not require at the newest version any of
// them compiles. A module a tool replaces without requiring it
// (Kubernetes' staging modules in hack/tools/kube) is required at v0.0.0:
// its packages compile to the same code as go.mod's, but are cached under
// another label.
func differences(builds map[string]map[string]version) []difference {
	newest := map[string]string{}
	seen := map[string]int{}
	for _, modules := range builds {
		for module, v := range modules {
			seen[module]++
			if have, ok := newest[module]; !ok || semver.Compare(v.compiled(), have) > 0 {
				newest[module] = v.compiled()
			}
		}
	}
	var out []difference
	for dir, modules := range builds {
		for module, v := range modules {
			if seen[module] > 1 && (v.Required != newest[module] || v.compiled() != newest[module]) {
				out = append(out, difference{Dir: dir, Module: module, Have: v, Want: newest[module]})
			}
		}
	}
	slices.SortFunc(out, func(a, b difference) int {
		return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Module, b.Module))
	})
	return out
}

// moduleVersions lists the module and version of every package the build
// of pkgs in dir compiles, as make test compiles it (without cgo).
func moduleVersions(dir, tags string, pkgs ...string) (map[string]version, error) {
	args := []string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}{{end}}"}
	if tags != "" {
		args = append(args, "-tags="+tags)
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	versions := map[string]version{}
	lines := bufio.NewScanner(bytes.NewReader(out))
	for lines.Scan() {
		// The main module has no version: it is the build, not a
		// dependency. A module replaced by a folder has no version to
		// compare either.
		fields := strings.Fields(lines.Text())
		switch len(fields) {
		case 2:
			versions[fields[0]] = version{Required: fields[1]}
		case 3:
			versions[fields[0]] = version{Required: fields[1], Replaced: fields[2]}
		}
	}
	return versions, lines.Err()
}

// survey lists the differences between the builds of the repository at root.
func survey(root string) ([]difference, error) {
	versions := map[string]map[string]version{}
	for _, b := range builds {
		modules, err := moduleVersions(filepath.Join(root, b.Dir), b.Tags, b.Packages...)
		if err != nil {
			return nil, err
		}
		versions[b.Dir] = modules
	}
	return differences(versions), nil
}

// raise moves every module that is behind up to the newest version, then
// tidies the module (each build lists what it builds: the repository its
// packages, the tool modules their tool directives).
func raise(root string, diffs []difference) error {
	byDir := map[string][]string{}
	for _, d := range diffs {
		byDir[d.Dir] = append(byDir[d.Dir], d.Module+"@"+d.Want)
	}
	for _, b := range builds {
		if len(byDir[b.Dir]) == 0 {
			continue
		}
		dir := filepath.Join(root, b.Dir)
		for _, args := range [][]string{append([]string{"get"}, byDir[b.Dir]...), {"mod", "tidy"}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = dir
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
			}
		}
	}
	return nil
}

func main() {
	check := flag.Bool("check", false, "change nothing; exit 1 if a module differs between the builds")
	flag.Parse()
	if err := run(".", *check); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	diffs, err := survey(root)
	if err != nil || len(diffs) == 0 {
		return err
	}
	if check {
		return fmt.Errorf("modules at different versions (make align-tools):\n%s", list(diffs))
	}
	if err := raise(root, diffs); err != nil {
		return err
	}
	// Raising a module can raise what it requires in turn.
	if diffs, err = survey(root); err != nil || len(diffs) == 0 {
		return err
	}
	return fmt.Errorf("modules still at different versions (run make align-tools again):\n%s", list(diffs))
}

func list(diffs []difference) string {
	lines := make([]string, len(diffs))
	for i, d := range diffs {
		lines[i] = "  " + d.String()
	}
	return strings.Join(lines, "\n")
}
