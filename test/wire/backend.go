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

package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackendPort is the port every backend serves HTTP on.
const BackendPort = 8080

// Backend is a workload's pod: an HTTP server on a pod address inside a
// node, answering every request with its name.
type Backend struct {
	Name    string
	Node    *Node
	Address netip.Addr

	server *http.Server
}

// StartBackend starts a backend called name on node. Every other node
// routes its address through node, as a pod network would.
func (b *Bed) StartBackend(name string, node *Node) (*Backend, error) {
	b.mu.Lock()
	addr := podRange.Addr()
	for range len(b.backends) + 1 {
		addr = addr.Next()
	}
	if !podRange.Contains(addr.Next()) {
		b.mu.Unlock()
		return nil, errors.New("no pod address left for another backend")
	}
	be := &Backend{Name: name, Node: node, Address: addr}
	b.backends = append(b.backends, be)
	b.mu.Unlock()

	if err := node.ns.ip("addr", "add", netip.PrefixFrom(addr, 32).String(), "dev", localLink); err != nil {
		return nil, err
	}
	for _, other := range b.Nodes {
		if other != node {
			if err := other.ns.ip("route", "add", netip.PrefixFrom(addr, 32).String(), "via", node.Address.String()); err != nil {
				return nil, err
			}
		}
	}
	l, err := node.ns.Listen(net.JoinHostPort(addr.String(), strconv.Itoa(BackendPort)))
	if err != nil {
		return nil, err
	}
	be.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, name)
	})}
	go func() { _ = be.server.Serve(l) }()
	return be, nil
}

func (be *Backend) close() {
	if be.server != nil {
		_ = be.server.Close()
	}
}

// Endpoint is the backend as an EndpointSlice lists it.
func (be *Backend) Endpoint(ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses: []string{be.Address.String()},
		Conditions: discoveryv1.EndpointConditions{
			Ready: new(ready), Serving: new(ready), Terminating: new(false),
		},
		NodeName:  new(be.Node.Name),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: be.Name},
	}
}

// EndpointSlice is the slice the endpoint-slice controller would write for
// Service ns/service (port name "", TCP, to BackendPort) with endpoints.
func EndpointSlice(ns, service string, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      service + "-wire",
			Namespace: ns,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   "wire.test-bed",
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
		Ports: []discoveryv1.EndpointPort{{
			Name: new(""), Protocol: new(corev1.ProtocolTCP), Port: new(int32(BackendPort)),
		}},
	}
}

// WriteEndpoints creates or replaces the EndpointSlice of Service ns/service.
func (b *Bed) WriteEndpoints(ctx context.Context, ns, service string, endpoints ...discoveryv1.Endpoint) error {
	want := EndpointSlice(ns, service, endpoints...)
	slices := b.cs.DiscoveryV1().EndpointSlices(ns)
	got, err := slices.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		if ignoreNotFound(err) != nil {
			return err
		}
		_, err = slices.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	want.ResourceVersion = got.ResourceVersion
	_, err = slices.Update(ctx, want, metav1.UpdateOptions{})
	return err
}

// DeleteEndpoints deletes the EndpointSlice of Service ns/service.
func (b *Bed) DeleteEndpoints(ctx context.Context, ns, service string) error {
	return ignoreNotFound(b.cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, service+"-wire", metav1.DeleteOptions{}))
}
