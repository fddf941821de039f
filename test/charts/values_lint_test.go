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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	yaml "go.yaml.in/yaml/v3"
)

// What helm lint does not check, and chart-testing's yamllint would: these
// tests read the files as a linter does, without a cluster.

// TestChartFilesAreStrictYAML reads every YAML and JSON file of the charts
// (templates aside: they are YAML only once rendered) and of test/charts/
// testdata strictly: a key defined twice in one mapping is refused (Helm
// keeps the last copy, so an edit to the first would do nothing), and so are
// trailing spaces and a missing final newline.
func TestChartFilesAreStrictYAML(t *testing.T) {
	var files []string
	for _, root := range []string{repoPath(t, "charts"), repoPath(t, "test", "charts", "testdata")} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "templates" {
				return filepath.SkipDir
			}
			switch filepath.Ext(path) {
			case ".yaml", ".yml", ".json":
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("listing %s: %v", root, err)
		}
	}
	if len(files) < 3*4 {
		t.Fatalf("found only %v: want at least each chart's Chart.yaml, values.yaml and values.schema.json, and its every-option values", files)
	}
	for _, f := range files {
		name, _ := filepath.Rel(repoPath(t), f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range lintText(string(data)) {
				t.Error(problem)
			}
		})
	}
}

// TestRenderedManifestsAreStrictYAML renders every chart with default values
// and with every option on, and reads each document strictly: a template
// that writes a key twice (a label both in a helper and beside it) renders
// YAML that the API server's decoder reads differently from kubectl.
func TestRenderedManifestsAreStrictYAML(t *testing.T) {
	for _, chart := range allCharts {
		for name, args := range renderings(t, chart) {
			t.Run(chart+" with "+name, func(t *testing.T) {
				out, err := runHelm(t, append([]string{"template", chart, chartDir(t, chart), "--namespace", "ipam-system"}, args...)...)
				if err != nil {
					t.Fatal(err)
				}
				if err := decodeStrictly(out); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestValuesAreDocumented checks that every value of every chart has a
// helm-docs description (a comment starting "# --" right above it), or sits
// under a documented map: the README's table is generated from them, and a
// value without one gets a row without a description.
func TestValuesAreDocumented(t *testing.T) {
	for _, chart := range allCharts {
		t.Run(chart, func(t *testing.T) {
			values := readValues(t, chart)
			for _, problem := range undocumented(values, "") {
				t.Error(problem)
			}
		})
	}
}

// TestValuesMatchSchema checks each chart's values.yaml against its
// values.schema.json in both directions: every value the file sets is
// described by the schema (which otherwise could not refuse a wrong type for
// it), and every property the schema describes has a default in values.yaml,
// or, for an optional alternative with no default (podDisruptionBudget's
// minAvailable and maxUnavailable), is named in the description of the map
// that holds it, or sits in a map whose default is empty (a namespaceSelector
// of {}).
func TestValuesMatchSchema(t *testing.T) {
	for _, chart := range allCharts {
		t.Run(chart, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(chartDir(t, chart), "values.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			var root map[string]any
			if err := json.Unmarshal(raw, &root); err != nil {
				t.Fatalf("values.schema.json: %v", err)
			}
			s := schemaWalk{root: root}
			s.compare(readValues(t, chart), root, "", "")
			for _, problem := range s.problems {
				t.Error(problem)
			}
		})
	}
}

// TestLintersCatchWhatTheyClaim feeds each check a small bad input, so that a
// check that stopped working cannot pass silently.
func TestLintersCatchWhatTheyClaim(t *testing.T) {
	g := NewWithT(t)
	g.Expect(lintText("a: 1\nb:\n  c: 2\n  c: 3\n")).To(ContainElement(ContainSubstring(`"c" already defined`)))
	g.Expect(lintText("a: 1 \n")).To(ContainElement(ContainSubstring("line 1: trailing spaces")))
	g.Expect(lintText("a: 1")).To(ContainElement(ContainSubstring("no newline at the end")))
	g.Expect(lintText("# -- A.\na: 1\n---\nb: 2\nb: 3\n")).To(ContainElement(ContainSubstring(`"b" already defined`)))
	g.Expect(decodeStrictly("kind: A\n---\nkind: B\nkind: C\n")).To(MatchError(ContainSubstring(`"kind" already defined`)))
	g.Expect(lintText("{\"a\": 1, \"a\": 2}\n")).To(ContainElement(ContainSubstring(`"a" already defined`)), "JSON too")

	doc := parseValues(g, `# The chart's values.

# -- Documented.
a: 1
# --- A section heading is no description ---
b: 2
# -- A map documented as a whole.
c:
  d: 1
e:
  # -- Each key of an undocumented map documented.
  f: 1
  g:
    h: 1
# -- Documented after a heading.
i: 1
`)
	g.Expect(undocumented(doc, "")).To(ConsistOf(
		ContainSubstring("b has no"),
		ContainSubstring("e.g.h has no"),
	))

	schema := map[string]any{
		"properties": map[string]any{
			"a": map[string]any{"type": "integer"},
			"c": map[string]any{"$ref": "#/definitions/c"},
			"x": map[string]any{"type": "string"},
			"y": map[string]any{"properties": map[string]any{"matchLabels": map[string]any{}}},
		},
		"definitions": map[string]any{"c": map[string]any{
			"type":       "object",
			"properties": map[string]any{"d": map[string]any{}, "min": map[string]any{}, "max": map[string]any{}},
		}},
	}
	doc = parseValues(g, "# -- A.\na: 1\n# -- C, with min.\nc:\n  d: 1\n  e: 2\n# -- B.\nb: 1\n# -- Y.\ny: {}\n")
	s := schemaWalk{root: schema}
	s.compare(doc, schema, "", "")
	g.Expect(s.problems).To(ConsistOf(
		ContainSubstring("c.e is not described"),
		ContainSubstring("b is not described"),
		ContainSubstring("c.max has no default"),
		ContainSubstring("x has no default"),
	))
}

// lintText returns what is wrong with a YAML (or JSON) file's text.
func lintText(text string) []string {
	var problems []string
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimRight(line, " \t") != line {
			problems = append(problems, fmt.Sprintf("line %d: trailing spaces", i+1))
		}
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		problems = append(problems, "no newline at the end of the file")
	}
	if err := decodeStrictly(text); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// decodeStrictly decodes every document of a YAML stream; yaml.v3 refuses a
// mapping that defines a key twice.
func decodeStrictly(stream string) error {
	dec := yaml.NewDecoder(strings.NewReader(stream))
	for i := 1; ; i++ {
		var doc any
		err := dec.Decode(&doc)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
}

// readValues parses chart's values.yaml into its root mapping.
func readValues(t *testing.T, chart string) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t, chart), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return parseValues(NewWithT(t), string(raw))
}

func parseValues(g Gomega, text string) *yaml.Node {
	var doc yaml.Node
	g.ExpectWithOffset(1, yaml.Unmarshal([]byte(text), &doc)).To(Succeed())
	g.ExpectWithOffset(1, doc.Content).To(HaveLen(1))
	g.ExpectWithOffset(1, doc.Content[0].Kind).To(Equal(yaml.MappingNode), "values are a map")
	return doc.Content[0]
}

// description returns the helm-docs description above a key: the comment
// paragraph right above it, from its line starting "# --". A comment
// separated from the key by an empty line, or a "# ---" heading, is none.
func description(key *yaml.Node) string {
	paragraphs := strings.Split(key.HeadComment, "\n\n")
	last := paragraphs[len(paragraphs)-1]
	for i, line := range strings.Split(last, "\n") {
		if line == "# --" || strings.HasPrefix(line, "# -- ") {
			return strings.Join(strings.Split(last, "\n")[i:], "\n")
		}
	}
	return ""
}

// undocumented lists the keys of mapping, under path, that have no
// description and are not maps whose every key is documented.
func undocumented(mapping *yaml.Node, path string) []string {
	var out []string
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		key, value := mapping.Content[i], mapping.Content[i+1]
		p := join(path, key.Value)
		switch {
		case description(key) != "":
		case value.Kind == yaml.MappingNode && len(value.Content) > 0:
			out = append(out, undocumented(value, p)...)
		default:
			out = append(out, fmt.Sprintf("%s has no description: put a comment starting \"# --\" right above it (line %d)", p, key.Line))
		}
	}
	return out
}

// schemaWalk compares values with a JSON schema, resolving local $refs.
type schemaWalk struct {
	root     map[string]any
	problems []string
}

// compare compares the mapping at path with the schema node that describes
// it; doc is the description of the key holding the mapping.
func (s *schemaWalk) compare(mapping *yaml.Node, node map[string]any, path, doc string) {
	node = s.resolve(node)
	props, ok := node["properties"].(map[string]any)
	if !ok {
		return // a free-form map (resources, labels): the schema says what its values are, not its keys
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		key, value := mapping.Content[i], mapping.Content[i+1]
		p := join(path, key.Value)
		seen[key.Value] = true
		prop, ok := props[key.Value].(map[string]any)
		if !ok {
			s.problems = append(s.problems, fmt.Sprintf("%s is not described in values.schema.json (values.yaml line %d)", p, key.Line))
			continue
		}
		if value.Kind == yaml.MappingNode {
			s.compare(value, prop, p, description(key))
		}
	}
	if len(mapping.Content) == 0 {
		return // an empty map ({}, a selector matching everything) sets none of its properties by design
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case seen[name]:
		case path == "":
			s.problems = append(s.problems, fmt.Sprintf("%s has no default in values.yaml", name))
		case !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(doc):
			s.problems = append(s.problems, fmt.Sprintf("%s has no default in values.yaml, and the description of %s does not name it", join(path, name), path))
		}
	}
}

// resolve follows a "#/definitions/<name>" reference.
func (s *schemaWalk) resolve(node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	name, found := strings.CutPrefix(ref, "#/definitions/")
	defs, _ := s.root["definitions"].(map[string]any)
	def, ok := defs[name].(map[string]any)
	if !found || !ok {
		s.problems = append(s.problems, "values.schema.json refers to "+ref+", which it does not define")
		return map[string]any{}
	}
	return s.resolve(def)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
