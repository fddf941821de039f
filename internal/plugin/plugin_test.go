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

package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpNamesTheKubectlCommand: the help calls the command as kubectl
// runs it and lists kubectl's flags beside the import's own and MetalLB's.
// The import itself is tested against the API server and MetalLB in
// internal/driver/metallb/importtest.
func TestHelpNamesTheKubectlCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"import", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("import --help: exit %d, stderr %q", code, stderr.String())
	}
	for _, want := range []string{
		"kubectl ipam import --class CLASS",
		"--kubeconfig", "--context", "-n, --namespace", "-A, --all-namespaces", "--as ", "--as-group", "--request-timeout",
		"-o, --output", "--wait-timeout", "-l, --selector", "--metallb-namespace",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "--timeout") {
		t.Errorf("help shows the deprecated --timeout:\n%s", stdout.String())
	}
}

// TestBadCommandLines exit 2 with the reason, before anything is read.
func TestBadCommandLines(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"export"}, `unknown command "export" for "kubectl ipam"`},
		{[]string{"import"}, "--class is required"},
		{[]string{"import", "--class", "public", "--no-such-flag"}, "unknown flag: --no-such-flag"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), tt.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("Main(%q) = %d, stderr %q; want 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
