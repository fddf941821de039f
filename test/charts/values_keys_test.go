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
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// TestValuesDefineEachKeyOnce reads each chart's values.yaml, and the file
// switching every option on, strictly: Helm keeps the last of two copies of
// a key, so an edit to the first would do nothing, and helm lint does not
// say so.
func TestValuesDefineEachKeyOnce(t *testing.T) {
	for _, chart := range allCharts {
		for _, file := range []string{filepath.Join(chartDir(t, chart), "values.yaml"), allOptions(t, chart)} {
			t.Run(chart+"/"+filepath.Base(file), func(t *testing.T) {
				g := NewWithT(t)
				data, err := os.ReadFile(file)
				g.Expect(err).NotTo(HaveOccurred())
				var values map[string]any
				g.Expect(yaml.UnmarshalStrict(data, &values)).To(Succeed())
			})
		}
	}
}
