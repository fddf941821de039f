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

package netns

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"time"
)

// An APIProxy listens on the API server's loopback address and port inside
// a namespace, and on further addresses of the namespace's own, and
// forwards each connection to the real one on the host's loopback. The
// programs inside then use the cluster's kubeconfig unchanged, and reach
// the server at the address its certificate names.
type APIProxy struct {
	ls []net.Listener
}

// LoopbackPort is the port of the API server at server (a URL), which must
// listen on 127.0.0.1: the proxy forwards only the loopback, the one
// address the host and every namespace both have.
func LoopbackPort(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	if host := u.Hostname(); host != "127.0.0.1" {
		return "", fmt.Errorf("the API server listens on %s; the namespaces reach only 127.0.0.1", host)
	}
	return u.Port(), nil
}

// StartAPIProxy forwards 127.0.0.1:port inside n, and port on each of also
// (addresses n has), to 127.0.0.1:port on the host, until Close.
func StartAPIProxy(n *Namespace, port string, also ...netip.Addr) (*APIProxy, error) {
	p := &APIProxy{}
	for _, a := range append([]netip.Addr{netip.MustParseAddr("127.0.0.1")}, also...) {
		l, err := n.Listen(net.JoinHostPort(a.String(), port))
		if err != nil {
			p.Close()
			return nil, err
		}
		p.ls = append(p.ls, l)
		go forward(l, port)
	}
	return p, nil
}

// forward accepts connections on l until it is closed, each piped to
// 127.0.0.1:port on the host.
func forward(l net.Listener, port string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
			if err != nil {
				_ = c.Close()
				return
			}
			Pipe(c, up)
		}()
	}
}

// Close stops accepting connections; those open go on until either side
// closes them. A nil proxy closes nothing, so that a half-built node can
// be closed.
func (p *APIProxy) Close() {
	if p == nil {
		return
	}
	for _, l := range p.ls {
		_ = l.Close()
	}
}

// Pipe copies both ways until either side closes, then closes both.
func Pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
}
