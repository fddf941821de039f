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

package manager

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// acceptedEncodings serves a 404 for every request and records the
// Accept-Encoding each one carried.
type acceptedEncodings struct {
	mu   sync.Mutex
	seen []string
}

func (a *acceptedEncodings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Accept-Encoding"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
}

// askedForGzip reads a ConfigMap through a manager built with args and says
// whether its request asked the server to gzip the answer.
func askedForGzip(t *testing.T, args ...string) bool {
	t.Helper()
	srv := &acceptedEncodings{}
	ts := httptest.NewTLSServer(srv) // client-go gives a plain-HTTP config the default transport, which always asks for gzip
	t.Cleanup(ts.Close)

	var o Options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs, "test")
	if err := fs.Parse(append([]string{"--health-probe-bind-address=0"}, args...)); err != nil {
		t.Fatal(err)
	}
	mgr, err := o.New(&rest.Config{Host: ts.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	err = mgr.GetAPIReader().Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
	if err == nil {
		t.Fatal("the server answers 404 to every request, yet the read succeeded")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.seen) == 0 {
		t.Fatal("the manager sent no request")
	}
	return strings.Contains(srv.seen[len(srv.seen)-1], "gzip")
}

func TestManagersAskForUncompressedResponsesUnlessTold(t *testing.T) {
	if askedForGzip(t) {
		t.Error("by default the manager asked the API server for gzip")
	}
	if !askedForGzip(t, "--api-compression") {
		t.Error("with --api-compression the manager did not ask for gzip")
	}
}
