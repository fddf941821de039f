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

package params

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// crdDir holds the MetalLB CRDs the e2e environment installs; rendering
// must match the version actually deployed.
const crdDir = "../../../../bin/metallb/v0.15.2/crds"

// crdSchema is the openAPIV3Schema of the served version of the CRD for a
// metallb.io kind, checked against the object's apiVersion.
func crdSchema(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	gvk := u.GroupVersionKind()
	file := filepath.Join(crdDir, fmt.Sprintf("metallb.io_%ss.yaml", strings.ToLower(gvk.Kind)))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("reading the CRD of %s: %v", gvk.Kind, err)
	}
	var crd map[string]any
	if err := utilyaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	spec := crd["spec"].(map[string]any)
	if spec["group"] != gvk.Group || spec["names"].(map[string]any)["kind"] != gvk.Kind {
		t.Fatalf("%s defines %v/%v, not %s", file, spec["group"], spec["names"], gvk.GroupKind())
	}
	for _, v := range spec["versions"].([]any) {
		version := v.(map[string]any)
		if version["name"] == gvk.Version && version["served"] == true {
			return version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		}
	}
	t.Fatalf("%s serves no version %s", file, gvk.Version)
	return nil
}

// schemaProblems checks value against the subset of structural schema the
// MetalLB CRDs use: type, properties, additionalProperties, items, required
// and minimum/maximum. Unknown fields are problems: the API server would
// prune them silently, which is how a typo would go unnoticed.
func schemaProblems(path string, value any, schema map[string]any) []string {
	var out []string
	switch schema["type"] {
	case "object":
		obj, ok := value.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T", path, value)}
		}
		props, _ := schema["properties"].(map[string]any)
		extra, _ := schema["additionalProperties"].(map[string]any)
		for _, key := range sortedKeys(obj) {
			switch sub, known := props[key].(map[string]any); {
			case known:
				out = append(out, schemaProblems(path+"."+key, obj[key], sub)...)
			case extra != nil:
				out = append(out, schemaProblems(path+"."+key, obj[key], extra)...)
			default:
				out = append(out, fmt.Sprintf("%s.%s: not in the schema", path, key))
			}
		}
		required, _ := schema["required"].([]any)
		for _, key := range required {
			if _, ok := obj[key.(string)]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: required", path, key))
			}
		}
	case "array":
		list, ok := value.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an array, got %T", path, value)}
		}
		for i, item := range list {
			out = append(out, schemaProblems(fmt.Sprintf("%s[%d]", path, i), item, schema["items"].(map[string]any))...)
		}
	case "string":
		if _, ok := value.(string); !ok {
			out = append(out, fmt.Sprintf("%s: want a string, got %T", path, value))
		}
	case "boolean":
		if _, ok := value.(bool); !ok {
			out = append(out, fmt.Sprintf("%s: want a boolean, got %T", path, value))
		}
	case "integer":
		n, ok := value.(int64)
		if !ok {
			return []string{fmt.Sprintf("%s: want an int64, got %T", path, value)}
		}
		if lo, ok := number(schema["minimum"]); ok && float64(n) < lo {
			out = append(out, fmt.Sprintf("%s: %d is below the minimum %v", path, n, lo))
		}
		if hi, ok := number(schema["maximum"]); ok && float64(n) > hi {
			out = append(out, fmt.Sprintf("%s: %d is above the maximum %v", path, n, hi))
		}
	default:
		out = append(out, fmt.Sprintf("%s: schema type %v is not handled by this test", path, schema["type"]))
	}
	return out
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// renderedObjects exercises every field the renderers can emit.
func renderedObjects(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	l2 := decode(t, `{"addresses":["10.0.0.0/24","2001:db8::/120"],"avoidBuggyIPs":true,"advertisement":{"l2":{
		"interfaces":["eth0"],"nodeSelectors":[{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"z","operator":"In","values":["1"]}]}]}}}`)
	bgp := decode(t, `{"addresses":["10.0.0.0/24","198.51.100.0-198.51.101.9","2001:db8::/120"],"advertisement":{"bgp":{
		"aggregationLength":24,"aggregationLengthV6":120,"localPref":4294967295,"communities":["1:2","large:1:2:3","alias"],
		"peers":["peer-a"],"nodeSelectors":[{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"z","operator":"Exists"}]}]}}}`)
	minimal := decode(t, `{"addresses":["10.0.0.0/24"]}`)
	return map[string]*unstructured.Unstructured{
		"pool with kept addresses": Pool("c", "metallb-system", l2, addrs("10.9.9.9", "2001:db8::1:1")),
		"minimal pool":             Pool("c", "metallb-system", minimal, nil),
		"L2 with every option":     Advertisement("c", "metallb-system", l2),
		"default L2":               Advertisement("c", "metallb-system", minimal),
		"BGP with every option":    Advertisement("c", "metallb-system", bgp),
	}
}

func TestRenderedObjectsMatchTheMetalLBCRDs(t *testing.T) {
	for name, u := range renderedObjects(t) {
		t.Run(name, func(t *testing.T) {
			schema := crdSchema(t, u)
			rootProps := schema["properties"].(map[string]any)
			for _, key := range sortedKeys(u.Object) {
				if _, ok := rootProps[key]; !ok {
					t.Errorf("top-level field %q is not in the schema", key)
				}
			}
			if problems := schemaProblems("spec", u.Object["spec"], rootProps["spec"].(map[string]any)); len(problems) > 0 {
				t.Errorf("rendered %s does not fit the CRD:\n  %s", u.GetKind(), strings.Join(problems, "\n  "))
			}
		})
	}
}

// TestSchemaCheckCatchesTypos proves the check above can fail.
func TestSchemaCheckCatchesTypos(t *testing.T) {
	u := renderedObjects(t)["BGP with every option"]
	spec := u.Object["spec"].(map[string]any)
	spec["aggregationLenght"] = spec["aggregationLength"]
	spec["aggregationLength"] = int64(0)
	spec["peers"] = []any{int64(1)}
	schema := crdSchema(t, u)["properties"].(map[string]any)["spec"].(map[string]any)
	got := schemaProblems("spec", spec, schema)
	want := []string{
		"spec.aggregationLenght: not in the schema",
		"spec.aggregationLength: 0 is below the minimum 1",
		"spec.peers[0]: want a string, got int64",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("schemaProblems = %q, want %q", got, want)
	}
}
