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
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// backend stands in for a driver's backend where no method of it is
// called: the checks below end before the import reads anything.
type backend struct{ driver.Backend }

// importer can import, and cannot hand over.
type importer struct{ backend }

func (importer) ImportRanges(*v1alpha1.IPAddressClass) ([]ipaddr.Range, func(netip.Addr) string, error) {
	return nil, nil, nil
}

func (importer) ImportPin() string { return "example.com/pin" }

func runMain(b driver.Backend, args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), "example-iad", nil, func() driver.Backend { return b }, args, &stdout, &stderr)
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
	}
	for _, tt := range tests {
		if code, stderr := runMain(importer{}, tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("Main(%q) = %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestMainFindsTheCapabilities: a backend that cannot import, or cannot
// hand over, says so before anything is read.
func TestMainFindsTheCapabilities(t *testing.T) {
	tests := []struct {
		backend driver.Backend
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
