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
	"net/netip"
	"strings"
	"testing"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// backend stands in for a driver's backend where no method of it is
// called: the checks below end before the import reads anything.
type backend struct{ Backend }

// importer can import, and cannot hand over.
type importer struct{ backend }

func (importer) ImportRanges(*v1alpha1.IPAddressClass) ([]ipaddr.Range, func(netip.Addr) string, error) {
	return nil, nil, nil
}

func (importer) ImportPin() string { return "example.com/pin" }

func runMain(b Backend, args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), "example-iad", nil, func() Backend { return b }, args, &stdout, &stderr)
	return code, stderr.String()
}

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
		{[]string{"--class", "public", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"--class", "public", "-o", "wide"}, `--output must be text, json or yaml, not "wide"`},
		{[]string{"--class", "public", "--wait-timeout", "0s"}, "--wait-timeout must be positive"},
		{[]string{"--class", "public", "--wait-timeout", "soon"}, `invalid argument "soon" for "--wait-timeout"`},
		{[]string{"--class", "public", "--timeout", "1m", "--wait-timeout", "1m"}, "--timeout is the old name of --wait-timeout"},
		{[]string{"--class", "public", "-A", "-n", "a"}, "--all-namespaces and --namespace exclude each other"},
		{[]string{"--class", "public", "-n", "a,Not_A_Namespace"}, `--namespace: "Not_A_Namespace" is no namespace name`},
	}
	for _, tt := range tests {
		if code, stderr := runMain(importer{}, tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("Main(%q) = %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestMainFindsTheCapabilities: a backend that cannot import, or cannot
// hand over, says so before anything is read.
// TestHelpNamesTheDriverCommand: `<driver> import --help` calls the
// command by the driver's binary.
func TestHelpNamesTheDriverCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), "example-iad", nil, func() Backend { return importer{} }, []string{"--help"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "example-iad import --class CLASS") || !strings.Contains(stdout.String(), "--context") {
		t.Errorf("--help = %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestMainFindsTheCapabilities(t *testing.T) {
	tests := []struct {
		backend Backend
		args    []string
		want    string
	}{
		{backend{}, []string{"--class", "public"}, "example-iad cannot import: its backend has no import capability"},
		{importer{}, []string{"--class", "public", "--handover"}, "example-iad cannot hand over: its backend has no handover capability"},
	}
	for _, tt := range tests {
		if code, stderr := runMain(tt.backend, tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("Main(%T, %q) = %d, stderr %q; want 2 and %q", tt.backend, tt.args, code, stderr, tt.want)
		}
	}
}
