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

package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Client is a namespace on the segment, as a machine beside the nodes: it
// reaches Pods and Services only through the routes the harness gave it.
type Client struct {
	// Address is the client's address on the segment.
	Address netip.Addr

	ns *namespace
}

// Netns is the client's network namespace, for `ip netns exec`.
func (c *Client) Netns() string { return c.ns.Name }

// HTTPClient is an HTTP client whose connections open in the client's
// namespace, speaking TLS with tlsConfig to https URLs.
func (c *Client) HTTPClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   tlsConfig,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return c.ns.dial(ctx, addr)
		},
	}}
}

// Get makes an HTTP GET from the client to url and returns the body of a
// 200 answer.
func (c *Client) Get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.HTTPClient(nil).Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}
