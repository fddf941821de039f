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
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// DefaultTag tags every reference unless Options.Tag says otherwise.
const DefaultTag = "local"

// modulePath is the module whose root Options.Root must be.
const modulePath = "github.com/cozystack/address-controller"

// Options says which images Build writes, for what, and where.
type Options struct {
	// Root is the repository's root, the folder of its go.mod.
	Root string
	// Dir is the folder the archives are written to (<Image.Name>.tar),
	// made if missing.
	Dir string
	// Tag tags every reference; DefaultTag if empty.
	Tag string
	// Arch is the GOARCH the binaries are built for; the host's if empty.
	Arch string
	// MetalLB, if set, is the folder `make metallb` builds MetalLB's
	// controller and speaker into: a binary there that is static and of
	// Arch goes into the image as it is, any other is built again.
	MetalLB string
	// Only names the images to write (Image.Name); every one if empty.
	Only []string
}

// Build builds the binaries of the images o selects and writes one archive
// per image into o.Dir, in the order of Images.
func Build(ctx context.Context, o Options) ([]Archive, error) {
	o, images, err := o.complete(ctx)
	if err != nil {
		return nil, err
	}
	// Every reference first: a chart that names no repository fails the
	// run before anything is built.
	refs := make([]name.Tag, len(images))
	for i, img := range images {
		if refs[i], err = reference(ctx, o, img); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	out, err := os.MkdirTemp("", "images-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(out) }()
	bins, err := binaries(ctx, o, images, out)
	if err != nil {
		return nil, err
	}
	archives := make([]Archive, 0, len(images))
	for i, img := range images {
		bin := bins[img.Name]
		a, err := WriteArchive(filepath.Join(o.Dir, img.Name+".tar"), refs[i], img, bin.path, o.Arch)
		if err != nil {
			return nil, err
		}
		if bin.prebuilt {
			a.Prebuilt = bin.path
		}
		archives = append(archives, a)
	}
	return archives, nil
}

// complete checks o and fills its defaults, and returns the images it
// selects.
func (o Options) complete(ctx context.Context) (Options, []Image, error) {
	if o.Root == "" || o.Dir == "" {
		return o, nil, fmt.Errorf("images: both the repository's root and the archives' folder must be set")
	}
	if mod, err := goOutput(ctx, o.Root, "list", "-m"); err != nil || mod != modulePath {
		return o, nil, fmt.Errorf("images: %s is not the root of %s (go list -m: %q, %v)", o.Root, modulePath, mod, err)
	}
	if o.Tag == "" {
		o.Tag = DefaultTag
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if err := checkArch(o.Arch); err != nil {
		return o, nil, fmt.Errorf("images: %w", err)
	}
	all := Images()
	if len(o.Only) == 0 {
		return o, all, nil
	}
	names := make([]string, 0, len(all))
	for _, img := range all {
		names = append(names, img.Name)
	}
	for _, n := range o.Only {
		if !slices.Contains(names, n) {
			return o, nil, fmt.Errorf("images: no image %q; the images are %s", n, strings.Join(names, ", "))
		}
	}
	chosen := slices.DeleteFunc(all, func(img Image) bool { return !slices.Contains(o.Only, img.Name) })
	return o, chosen, nil
}

// reference is img's repository, tagged o.Tag.
func reference(ctx context.Context, o Options, img Image) (name.Tag, error) {
	repo, err := repository(ctx, o.Root, img)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	tag, err := name.NewTag(repo+":"+o.Tag, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image %s: the tag %q: %w", img.Name, o.Tag, err)
	}
	return tag, nil
}

// repository is the image repository img's chart names by default, read
// from the chart's values.yaml.
func repository(ctx context.Context, root string, img Image) (string, error) {
	c := img.chart
	if c == nil {
		return img.repository, nil
	}
	dir, err := chartDir(ctx, root, img)
	if err != nil {
		return "", err
	}
	values := filepath.Join(dir, "values.yaml")
	b, err := os.ReadFile(values)
	if err != nil {
		return "", fmt.Errorf("the chart's values: %w", err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("%s: %w", values, err)
	}
	for _, k := range c.key {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[k]
	}
	repo, ok := v.(string)
	if !ok || repo == "" {
		return "", fmt.Errorf("%s names no image repository at %s", values, strings.Join(c.key, "."))
	}
	return repo, nil
}

// chartDir is the folder of the chart that names img's repository.
func chartDir(ctx context.Context, root string, img Image) (string, error) {
	c := img.chart
	if c.goModule == "" {
		return filepath.Join(root, c.dir), nil
	}
	dir := filepath.Join(root, img.module)
	// The chart is in the module's source, which a build that reuses
	// binaries may not have downloaded yet.
	if _, err := goOutput(ctx, dir, "mod", "download", c.goModule); err != nil {
		return "", err
	}
	src, err := goOutput(ctx, dir, "list", "-m", "-f", "{{.Dir}}", c.goModule)
	if err != nil {
		return "", err
	}
	return filepath.Join(src, c.dir), nil
}

// ChartDir is the folder of the chart that names the image called image
// by default: one of this repository's, or MetalLB's inside its Go module
// (downloaded if need be), which its tests install as a user would.
func ChartDir(ctx context.Context, root, image string) (string, error) {
	for _, img := range Images() {
		if img.Name == image {
			if img.chart == nil {
				return "", fmt.Errorf("no chart names the image %s", image)
			}
			return chartDir(ctx, root, img)
		}
	}
	return "", fmt.Errorf("no image %q", image)
}
