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

package promtext

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Sample is one metric line: its labels and value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Parse reads the samples of the named metrics from a Prometheus text
// exposition. It understands what the API server and controller-runtime
// print: one sample a line, quoted label values with \" \\ \n escapes.
func Parse(r io.Reader, names ...string) (map[string][]Sample, error) {
	out := map[string][]Sample{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if !slices.Contains(names, name) {
			continue
		}
		labels, tail, err := parseLabels(line[len(name):])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		fields := strings.Fields(tail)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s: no value", name)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = append(out[name], Sample{Labels: labels, Value: v})
	}
	return out, s.Err()
}

func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	if !strings.HasPrefix(s, "{") {
		return labels, s, nil
	}
	i := 1
	for {
		for i < len(s) && (s[i] == ',' || s[i] == ' ') {
			i++
		}
		if i < len(s) && s[i] == '}' {
			return labels, s[i+1:], nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 || i+eq+1 >= len(s) || s[i+eq+1] != '"' {
			return nil, "", fmt.Errorf("malformed labels %q", s)
		}
		key := s[i : i+eq]
		i += eq + 2
		var b strings.Builder
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, "", fmt.Errorf("unterminated label value in %q", s)
		}
		labels[key] = b.String()
		i++
	}
}
