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
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/cozystack/address-controller/test/testkit"
)

// imageLine matches the image of a container in a rendered manifest.
var imageLine = regexp.MustCompile(`(?m)^\s*(?:-\s+)?image:\s*"?([^"\s]+)"?\s*$`)

// TestChartsNameTheArchives renders each chart as a user installs it from
// these archives, its defaults with only the image tag changed (and, for
// MetalLB's, the FRR sidecars off: the speaker image carries the speaker
// alone), and checks that every container's image is an archive's
// reference, and that the chart's own image is there.
func TestChartsNameTheArchives(t *testing.T) {
	refs := map[string]string{}
	for _, a := range archives(t) {
		refs[a.Image.Name] = a.Ref
	}
	root := repoRoot(t)
	metallbChart, err := chartDir(t.Context(), root, metallb("controller"))
	if err != nil {
		t.Fatal(err)
	}
	tag := DefaultTag
	for _, tc := range []struct {
		chart string
		set   []string
		want  []string
	}{
		{filepath.Join(root, "charts", "address-controller"), []string{"image.tag=" + tag}, []string{"address-controller"}},
		{filepath.Join(root, "charts", "metallb-iad"), []string{"image.tag=" + tag}, []string{"metallb-iad"}},
		{filepath.Join(root, "charts", "cilium-iad"), []string{"image.tag=" + tag}, []string{"cilium-iad"}},
		{
			metallbChart,
			[]string{"controller.image.tag=" + tag, "speaker.image.tag=" + tag, "speaker.frr.enabled=false"},
			[]string{"metallb-controller", "metallb-speaker"},
		},
	} {
		t.Run(filepath.Base(tc.chart), func(t *testing.T) {
			args := []string{"template", "release", tc.chart, "--namespace", "images-test"}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out := helm(t, args...)
			matches := imageLine.FindAllStringSubmatch(out, -1)
			rendered := make([]string, 0, len(matches))
			for _, m := range matches {
				rendered = append(rendered, m[1])
			}
			if len(rendered) == 0 {
				t.Fatalf("helm template rendered no container image:\n%s", out)
			}
			for _, img := range rendered {
				if !slices.Contains(slices.Collect(maps.Values(refs)), img) {
					t.Errorf("the chart runs %s, which no archive holds (archives: %v)", img, refs)
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(rendered, refs[w]) {
					t.Errorf("the chart does not run %s (the archive %s); it runs %v", refs[w], w, rendered)
				}
			}
		})
	}
}

// helm runs the repository's bin/helm with args (testkit.Helm) and
// returns what it printed.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := testkit.Helm(t, args...)
	if err != nil {
		t.Fatalf("helm %v: %v", args, err)
	}
	return out
}
