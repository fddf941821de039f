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

package cluster

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEgressProxy speaks to the API server's egress proxy as the API server
// does (HTTP CONNECT on its Unix socket): without a dialer it refuses with
// 503, anything but CONNECT gets 400, and with one it tunnels to the
// address the request names, both ways.
func TestEgressProxy(t *testing.T) {
	dir := t.TempDir()
	e, config, err := startEgress(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.close() })
	if filepath.Dir(config) != dir {
		t.Fatalf("the configuration %s is not in the cluster's folder %s", config, dir)
	}
	c := &Cluster{egress: e}

	// An echo server standing for a webhook in the cluster's network.
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = echo.Close() })
	go func() {
		for {
			conn, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(conn, conn); _ = conn.Close() }()
		}
	}()

	connect := func(request string) (*http.Response, net.Conn) {
		t.Helper()
		conn, err := net.Dial("unix", filepath.Join(dir, egressSocket))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, request); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp, conn
	}
	target := echo.Addr().String()
	tunnel := "CONNECT " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

	if resp, _ := connect(tunnel); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("without a dialer: %s, want 503", resp.Status)
	}
	if resp, _ := connect("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a GET: %s, want 400", resp.Status)
	}

	dialed := make(chan string, 10)
	if err := c.SetClusterDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		dialed <- addr
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}); err != nil {
		t.Fatal(err)
	}
	resp, conn := connect(tunnel)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with a dialer: %s, want 200", resp.Status)
	}
	if _, err := io.WriteString(conn, "ping\n"); err != nil {
		t.Fatal(err)
	}
	// ReadResponse's reader may hold nothing beyond the response: the echo
	// answers only after the ping.
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ping" {
		t.Errorf("through the tunnel: %q, %v; want the echo of ping", line, err)
	}
	if len(dialed) != 1 {
		t.Errorf("the dialer was asked %d times, want once", len(dialed))
	} else if addr := <-dialed; addr != target {
		t.Errorf("the dialer was asked for %s, want %s", addr, target)
	}

	if err := c.SetClusterDialer(nil); err != nil {
		t.Fatal(err)
	}
	if resp, _ := connect(tunnel); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after the dialer was taken back: %s, want 503", resp.Status)
	}
	if err := (&Cluster{}).SetClusterDialer(nil); err == nil {
		t.Error("a cluster without workloads took a dialer")
	}
}
