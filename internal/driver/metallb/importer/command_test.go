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

package importer

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestMainRefusesBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "--class is required"},
		{[]string{"--class", "public", "--dry-run", "--apply"}, "--dry-run and --apply exclude each other"},
		{[]string{"--class", "public", "--undo", "--handover"}, "--undo and --handover exclude each other"},
		{[]string{"--class", "public", "--selector", "a in ("}, "--selector"},
		{[]string{"--class", "public", "extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), tt.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("Main(%q) = %d, stderr %q; want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
