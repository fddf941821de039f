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

package charts

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/testkit"
)

// The charts: the core, which is installed first, and one per driver.
const (
	coreChart   = "address-controller"
	driverChart = "metallb-iad"
	ciliumChart = "cilium-iad"
)

// allCharts lists every chart, the core's first.
var allCharts = []string{coreChart, driverChart, ciliumChart}

// repoPath returns a path inside the repository.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatalf("finding the repository root: %v", err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// chartDir is the folder of chart name.
func chartDir(t *testing.T, name string) string {
	t.Helper()
	return repoPath(t, "charts", name)
}

// allOptions is the values file that switches on every option of chart name.
func allOptions(t *testing.T, name string) string {
	t.Helper()
	return repoPath(t, "test", "charts", "testdata", name+"-all-options.yaml")
}

// runHelm runs bin/helm with args and returns its standard output, or an
// error carrying its standard error.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return testkit.Helm(t, args...)
}

// render runs helm template for chart as release in namespace, with extra
// arguments (--set, -f), and decodes every object it renders.
func render(t *testing.T, chart, release, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := runHelm(t, append([]string{"template", release, chartDir(t, chart), "--namespace", namespace}, args...)...)
	if err != nil {
		t.Fatalf("helm template %s %v: %v", chart, args, err)
	}
	objs, err := decodeObjects(out)
	if err != nil {
		t.Fatalf("decoding what helm template %s %v rendered: %v", chart, args, err)
	}
	return objs
}

// decodeObjects splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeObjects(stream string) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// ofKind returns the objects of kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}
