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

package runkit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteJSONMakesTheFolder: a report lands in a folder that did not
// exist, indented by two spaces and ending in a newline.
func TestWriteJSONMakesTheFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin", "report.json")
	if err := WriteJSON(path, map[string]int{"claims": 2}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"claims\": 2\n}\n"; string(got) != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestGetAnswersWithAnyStatus: a status other than 200 is the caller's to
// read, not an error.
func TestGetAnswersWithAnyStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, r.URL.Path)
	}))
	defer srv.Close()
	resp, err := Get(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "/metrics" {
		t.Errorf("got %s %q, want 503 and the path asked for", resp.Status, body)
	}
}
