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

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/test/promtext"
	"github.com/cozystack/address-controller/test/runkit"
)

// ObjectSize is one object of a scenario as the API server keeps it, read
// once the scenario converged: what each of its writes stores again.
type ObjectSize struct {
	// Kind names the object ("claim", "address"); Resource is its key in
	// Result.Writes ("ipaddressclaims", "ipaddresses.ipam.cluster.x-k8s.io").
	Kind     string `json:"kind"`
	Resource string `json:"resource"`
	Name     string `json:"name"`
	// Bytes is its compact JSON as the API server serves it, managed fields
	// included; ManagedFieldsBytes is the part that is
	// metadata.managedFields, Managers the number of its entries.
	Bytes              int `json:"bytes"`
	ManagedFieldsBytes int `json:"managedFieldsBytes"`
	Managers           int `json:"managers"`
	// StoredBytes is the value etcd holds under the object's key (custom
	// resources are stored as JSON); 0 when etcd could not be read.
	StoredBytes int `json:"storedBytes,omitempty"`
}

// objectRef names an object by its REST path and its etcd key, both built
// from its group, version, resource, namespace ("" for cluster-scoped) and
// name.
type objectRef struct {
	kind, group, version, resource, namespace, name string
}

func (o objectRef) path() string {
	p := "/apis/" + o.group + "/" + o.version
	if o.namespace != "" {
		p += "/namespaces/" + o.namespace
	}
	return p + "/" + o.resource + "/" + o.name
}

// etcdKey is where the API server keeps the object: under /registry, by
// group and resource (the storage layout of every custom resource).
func (o objectRef) etcdKey() string {
	k := "/registry/" + o.group + "/" + o.resource + "/"
	if o.namespace != "" {
		k += o.namespace + "/"
	}
	return k + o.name
}

// writesKey is the object's resource as Result.Writes names it.
func (o objectRef) writesKey() string {
	if o.group == ownGroup {
		return o.resource
	}
	return o.resource + "." + o.group
}

// objectSize reads one object from the API server, with its managed
// fields, and its stored value from etcd.
func (e *env) objectSize(ctx context.Context, o objectRef) (ObjectSize, map[string]any, error) {
	raw, err := e.rc.Get().AbsPath(o.path()).DoRaw(ctx)
	if err != nil {
		return ObjectSize{}, nil, fmt.Errorf("reading %s: %w", o.path(), err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return ObjectSize{}, nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return ObjectSize{}, nil, err
	}
	s := ObjectSize{Kind: o.kind, Resource: o.writesKey(), Name: o.name, Bytes: compact.Len()}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if mf, ok := meta["managedFields"].([]any); ok {
			s.Managers = len(mf)
			b, _ := json.Marshal(mf)
			s.ManagedFieldsBytes = len(b)
		}
	}
	if stored, err := e.etcdValueSize(ctx, o.etcdKey()); err == nil {
		s.StoredBytes = stored
	} else {
		e.cfg.logf("reading %s from etcd: %v", o.etcdKey(), err)
	}
	return s, obj, nil
}

// etcdValueSize asks etcd's JSON gateway for the value under key and
// returns its length.
func (e *env) etcdValueSize(ctx context.Context, key string) (int, error) {
	base := e.cluster.EtcdURL()
	if base == "" {
		return 0, fmt.Errorf("no etcd URL")
	}
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/v3/kv/range",
		bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("etcd answered %s", resp.Status)
	}
	var out struct {
		KVs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	if len(out.KVs) != 1 {
		return 0, fmt.Errorf("%d values under %s", len(out.KVs), key)
	}
	v, err := base64.StdEncoding.DecodeString(out.KVs[0].Value)
	if err != nil {
		return 0, err
	}
	return len(v), nil
}

// etcdReceivedBytes is how many bytes etcd has received from its clients
// (the API server) over gRPC so far: every write's stored value, and the
// requests' framing.
func (e *env) etcdReceivedBytes(ctx context.Context) (float64, error) {
	base := e.cluster.EtcdURL()
	if base == "" {
		return 0, fmt.Errorf("no etcd URL")
	}
	resp, err := runkit.Get(ctx, strings.TrimSuffix(base, "/")+"/metrics")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	const metric = "etcd_network_client_grpc_received_bytes_total"
	m, err := promtext.Parse(resp.Body, metric)
	if err != nil {
		return 0, err
	}
	var total float64
	for _, s := range m[metric] {
		total += s.Value
	}
	return total, nil
}

// claimObjects reads the first claim of a scenario and the first address
// its status names (the product's kinds).
func (e *env) claimObjects(ctx context.Context, ns string) ([]ObjectSize, error) {
	claim := objectRef{kind: "claim", group: ownGroup, version: v1alpha1.GroupVersion.Version, resource: "ipaddressclaims",
		namespace: ns, name: claimName(0)}
	cs, obj, err := e.objectSize(ctx, claim)
	if err != nil {
		return nil, err
	}
	status, _ := obj["status"].(map[string]any)
	addrs, _ := status["addresses"].([]any)
	if len(addrs) == 0 {
		return []ObjectSize{cs}, fmt.Errorf("claim %s/%s names no address", ns, claim.name)
	}
	name, _ := addrs[0].(map[string]any)["name"].(string)
	as, _, err := e.objectSize(ctx, objectRef{kind: "address", group: ownGroup, version: v1alpha1.GroupVersion.Version,
		resource: "ipaddresses", name: name})
	if err != nil {
		return []ObjectSize{cs}, err
	}
	return []ObjectSize{cs, as}, nil
}

// peerObjects reads the first claim of a peer's anchor and the IPAddress
// its status.addressRef names.
func (a *anchorRun) peerObjects(ctx context.Context, name string) ([]ObjectSize, error) {
	ns := a.peerNS[name]
	claim := objectRef{kind: "claim", group: gvkPeerClaim.Group, version: gvkPeerClaim.Version,
		resource: "ipaddressclaims", namespace: ns, name: claimName(0)}
	cs, obj, err := a.e.objectSize(ctx, claim)
	if err != nil {
		return nil, err
	}
	status, _ := obj["status"].(map[string]any)
	ref, _ := status["addressRef"].(map[string]any)
	addr, _ := ref["name"].(string)
	if addr == "" {
		return []ObjectSize{cs}, fmt.Errorf("claim %s/%s names no address", ns, claim.name)
	}
	as, _, err := a.e.objectSize(ctx, objectRef{kind: "address", group: gvkPeerClaim.Group, version: gvkPeerClaim.Version,
		resource: "ipaddresses", namespace: ns, name: addr})
	if err != nil {
		return []ObjectSize{cs}, err
	}
	return []ObjectSize{cs, as}, nil
}
