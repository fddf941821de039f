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
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// machines maps each GOARCH an image can be built for to its ELF machine.
var machines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// checkArch fails unless arch is a GOARCH images are built for.
func checkArch(arch string) error {
	if _, ok := machines[arch]; ok {
		return nil
	}
	known := slices.Sorted(maps.Keys(machines))
	return fmt.Errorf("architecture %q: images are built for one of %s", arch, strings.Join(known, ", "))
}

// checkStatic fails unless the file at p is an ELF executable for
// linux/arch that needs neither a dynamic loader nor a shared library: the
// only kind of binary that runs in an image with nothing else in it.
func checkStatic(p, arch string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s is not an ELF executable: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	if f.Machine != machines[arch] {
		return fmt.Errorf("%s is built for %s, not for %s (%s)", p, f.Machine, arch, machines[arch])
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is linked dynamically (it needs a loader): build it with CGO_ENABLED=0", p)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("reading the libraries %s needs: %w", p, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries (%s): build it with CGO_ENABLED=0", p, strings.Join(libs, ", "))
	}
	return nil
}

// A binary is the file that goes into an image.
type binary struct {
	path string
	// prebuilt is set when the file is Options.MetalLB's, not a build's.
	prebuilt bool
}

// binaries builds the binary of every image in images for linux/o.Arch
// into folder out, and returns each image's binary by name. A MetalLB
// binary comes from o.MetalLB instead when one there is static and of the
// right architecture.
func binaries(ctx context.Context, o Options, images []Image, out string) (map[string]binary, error) {
	bins := make(map[string]binary, len(images))
	// One go build per module and set of linker flags, so that what the
	// binaries share is compiled once.
	type build struct{ module, ldflags string }
	var order []build
	pkgs := map[build][]string{}
	for _, img := range images {
		if p := prebuilt(o, img); p != "" {
			bins[img.Name] = binary{path: p, prebuilt: true}
			continue
		}
		b := build{img.module, img.ldflags}
		if _, ok := pkgs[b]; !ok {
			order = append(order, b)
		}
		pkgs[b] = append(pkgs[b], img.pkg)
		bins[img.Name] = binary{path: filepath.Join(out, path.Base(img.pkg))}
	}
	for _, b := range order {
		if err := goBuild(ctx, filepath.Join(o.Root, b.module), out, o.Arch, b.ldflags, pkgs[b]...); err != nil {
			return nil, err
		}
	}
	return bins, nil
}

// prebuilt returns the binary of img in o.MetalLB, or "" when there is
// none fit for an image (make metallb built it dynamically linked, or for
// another architecture).
func prebuilt(o Options, img Image) string {
	if o.MetalLB == "" || img.module != metallbModule {
		return ""
	}
	p := filepath.Join(o.MetalLB, path.Base(img.pkg))
	if checkStatic(p, o.Arch) != nil {
		return ""
	}
	return p
}

// goBuild builds pkgs of the Go module in folder dir into folder out, as
// the Dockerfile builds the managers: without cgo, with -trimpath, for
// linux/arch.
func goBuild(ctx context.Context, dir, out, arch, ldflags string, pkgs ...string) error {
	args := []string{"build", "-trimpath"}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	args = append(args, "-o", out+string(filepath.Separator))
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s (in %s): %w\n%s", strings.Join(pkgs, " "), dir, err, b)
	}
	return nil
}

// goOutput runs go with args in folder dir and returns what it printed,
// trimmed.
func goOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		if exit, ok := errors.AsType[*exec.ExitError](err); ok {
			return "", fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, exit.Stderr)
		}
		return "", fmt.Errorf("go %s (in %s): %w", strings.Join(args, " "), dir, err)
	}
	return strings.TrimSpace(string(b)), nil
}
