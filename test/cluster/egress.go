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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A Dialer opens a TCP connection to address in the cluster's network: a
// node, a Pod, or a Service's ClusterIP.
type Dialer func(ctx context.Context, address string) (net.Conn, error)

// egressDialTimeout bounds how long the egress proxy waits for a
// connection into the cluster's network.
const egressDialTimeout = 10 * time.Second

// egressSocket is the proxy's Unix socket in the cluster's folder.
const egressSocket = "egress.sock"

// egressConfig is the API server's egress selector configuration: what it
// sends to the cluster's network (webhooks, aggregated APIs, kubelets'
// logs and exec) goes through an HTTP CONNECT proxy on a Unix socket, as
// it goes through konnectivity in clusters whose control plane is not on
// the nodes' network.
const egressConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`

// egress is the API server's proxy into the cluster's network: the host
// routes to neither Pods nor Services, so each connection is opened by the
// Dialer the node harness hands over (from inside a node), and refused
// while there is none.
type egress struct {
	l    net.Listener
	mu   sync.Mutex
	dial Dialer
}

// startEgress listens on the proxy's socket in dir and writes the API
// server's egress configuration there, returning its path.
func startEgress(dir string) (*egress, string, error) {
	sock := filepath.Join(dir, egressSocket)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, "", fmt.Errorf("the API server's egress proxy: %w", err)
	}
	config := filepath.Join(dir, "egress-selector.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, egressConfig, sock), 0o600); err != nil {
		_ = l.Close()
		return nil, "", err
	}
	e := &egress{l: l}
	go e.serve()
	return e, config, nil
}

// SetClusterDialer hands the API server's egress proxy the way into the
// cluster's network; nil takes it back. Only a cluster started with
// WithWorkloads has the proxy.
func (c *Cluster) SetClusterDialer(d Dialer) error {
	if c.egress == nil {
		return errors.New("the cluster sends nothing to the cluster's network: start it WithWorkloads")
	}
	c.egress.mu.Lock()
	defer c.egress.mu.Unlock()
	c.egress.dial = d
	return nil
}

func (e *egress) dialer() Dialer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dial
}

func (e *egress) serve() {
	for {
		conn, err := e.l.Accept()
		if err != nil {
			return
		}
		go e.handle(conn)
	}
}

// handle answers one CONNECT request and then copies both ways.
func (e *egress) handle(conn net.Conn) {
	refuse := func(status int) {
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\n\r\n", status, http.StatusText(status))
		_ = conn.Close()
	}
	_ = conn.SetReadDeadline(time.Now().Add(egressDialTimeout))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect || req.URL.Host == "" {
		refuse(http.StatusBadRequest)
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	dial := e.dialer()
	if dial == nil {
		refuse(http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), egressDialTimeout)
	up, err := dial(ctx, req.URL.Host)
	cancel()
	if err != nil {
		refuse(http.StatusBadGateway)
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		_ = up.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, br) // what the API server sent after its request, then the rest
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(conn, up)
		done <- struct{}{}
	}()
	<-done
	_ = conn.Close()
	_ = up.Close()
	<-done
}

// close stops accepting connections.
func (e *egress) close() error {
	if e == nil {
		return nil
	}
	return e.l.Close()
}
