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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/netns"
)

// The test network's addresses, all from the documentation ranges (RFC 5737).
var (
	// Segment is the bridge's subnet: nodes from .129 up, the client at .254.
	Segment = netip.MustParsePrefix("192.0.2.128/25")
	// LoadBalancerRange is where tests take the addresses of their classes:
	// the client reaches it on-link, through the bridge, so it must ARP.
	LoadBalancerRange = netip.MustParsePrefix("198.51.100.192/26")
	// podRange holds the backends' addresses, on their nodes' loopback.
	podRange = netip.MustParsePrefix("192.0.2.64/27")
	// ClientAddress is the client's address on the segment.
	ClientAddress = netip.MustParseAddr("192.0.2.254")
)

// Interface names inside the node namespaces.
const (
	// LinkName is every member's interface on the bridge; the speakers
	// announce from it.
	LinkName = "eth0"
	// localLink holds a node's load-balancer and pod addresses: the
	// loopback, as LVS direct routing does. kube-proxy's IPVS mode uses a
	// dummy (kube-ipvs0) instead; these machines' kernels may lack the
	// dummy driver, and lo is the same for what is tested: addresses the
	// node accepts packets for, and never answers ARP for on LinkName.
	localLink = "lo"
)

// NodeOptions describe one node namespace.
type NodeOptions = cluster.NodeOptions

// Options choose the test bed's nodes.
type Options struct {
	// Cluster is the running local control plane, with MetalLB's CRDs; its
	// assets must hold the speaker (make control-plane builds it).
	Cluster *cluster.Cluster
	// Nodes are the node namespaces, at least one.
	Nodes []NodeOptions
	// Routes are the load-balancer ranges the client reaches on-link, through
	// the bridge; empty means LoadBalancerRange. Documentation ranges only.
	Routes []netip.Prefix
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// Bed is a running wire test bed.
type Bed struct {
	c       *cluster.Cluster
	cs      kubernetes.Interface
	log     func(format string, args ...any)
	id      string
	apiPort string

	// memberlistKeys is the directory holding the key the speakers encrypt
	// their memberlist traffic with, as MetalLB's chart mounts it.
	memberlistKeys string

	bridge *namespace
	client *namespace
	// Nodes in the order they were asked for.
	Nodes   []*Node
	proxier *proxier

	mu       sync.Mutex
	backends []*Backend
}

// CheckRequirements says why the bed cannot run here, or nil.
func CheckRequirements() error {
	if os.Geteuid() != 0 {
		return errors.New("the wire test bed needs root (it creates network namespaces, a bridge and packet sockets)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("the wire test bed needs iproute2's ip on PATH")
	}
	if _, err := exec.LookPath("sysctl"); err != nil {
		return errors.New("the wire test bed needs sysctl on PATH")
	}
	return nil
}

// Start builds the network, registers the nodes, and starts a speaker on each
// and the proxier. On error, whatever it built is removed again.
func Start(ctx context.Context, opts Options) (b *Bed, err error) {
	if err := CheckRequirements(); err != nil {
		return nil, err
	}
	if len(opts.Nodes) == 0 || len(opts.Nodes) > 100 {
		return nil, fmt.Errorf("the wire test bed takes 1 to 100 nodes, not %d", len(opts.Nodes))
	}
	speaker := filepath.Join(opts.Cluster.Assets.MetalLBDir, "speaker")
	if _, err := os.Stat(speaker); err != nil {
		return nil, fmt.Errorf("%w (run `make control-plane` to build the MetalLB speaker)", err)
	}
	base, err := opts.Cluster.NewBed("wire-", 3)
	if err != nil {
		return nil, err
	}
	b = &Bed{c: opts.Cluster, cs: base.Clientset, log: opts.Log, id: base.ID, apiPort: base.APIPort}
	if b.log == nil {
		b.log = func(string, ...any) {}
	}
	defer func() {
		if err != nil {
			_ = b.Close()
			b = nil
		}
	}()
	b.log("Building the wire network %s: a bridge, a client and %d node namespaces", b.id, len(opts.Nodes))
	if b.memberlistKeys, err = writeMemberlistKey(b.c.Dir, b.id); err != nil {
		return b, err
	}
	if b.bridge, err = b.addNetns("br"); err != nil {
		return b, err
	}
	if err := netns.AddBridge(b.bridge.Namespace); err != nil {
		return b, err
	}
	if b.client, err = b.addNetns("client"); err != nil {
		return b, err
	}
	if err := b.plug(b.client, "pc", clientMAC, ClientAddress); err != nil {
		return b, err
	}
	// The client's only other routes: the load-balancer ranges, on-link on
	// the bridge, so that it asks by ARP who holds an address.
	routes := opts.Routes
	if len(routes) == 0 {
		routes = []netip.Prefix{LoadBalancerRange}
	}
	for _, r := range routes {
		if !documentation(r) {
			return b, fmt.Errorf("%s is outside the documentation ranges; the bed routes nothing else", r)
		}
		if err := b.client.ip("route", "add", r.Masked().String(), "dev", LinkName); err != nil {
			return b, err
		}
	}
	for i, o := range opts.Nodes {
		n, err := b.addNode(ctx, i, o)
		if n != nil {
			b.Nodes = append(b.Nodes, n) // so that Close removes what it built
		}
		if err != nil {
			return b, err
		}
	}
	if b.proxier, err = startProxier(b); err != nil {
		return b, err
	}
	for _, n := range b.Nodes {
		if err := n.StartSpeaker(ctx); err != nil {
			return b, err
		}
	}
	return b, nil
}

// writeMemberlistKey writes a random memberlist key where --ml-secret-key-path
// looks for it (a file named secretkey in the directory), in a directory of
// the bed's own under the cluster's.
func writeMemberlistKey(clusterDir, id string) (string, error) {
	dir := filepath.Join(clusterDir, "memberlist-"+id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "secretkey"), []byte(hex.EncodeToString(key)), 0o600)
}

// documentationRanges are the ranges RFC 5737 and RFC 3849 set aside for
// examples: nothing real lives there.
var documentationRanges = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

func documentation(p netip.Prefix) bool {
	for _, d := range documentationRanges {
		if d.Bits() <= p.Bits() && d.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// ClientNetns is the name of the client's network namespace, for
// `ip netns exec`.
func (b *Bed) ClientNetns() string { return b.client.Name }

var clientMAC = net.HardwareAddr{0x02, 0x00, 0xc0, 0x00, 0x02, 0xfe}

// addNetns makes a namespace named after the bed and has the cluster's
// watchdog delete it if the test process dies.
func (b *Bed) addNetns(role string) (*namespace, error) {
	n, err := b.c.AddNetns(b.id + "-" + role)
	if err != nil {
		return nil, err
	}
	return &namespace{n}, nil
}

// plug connects namespace n to the bridge through a veth pair whose inside
// end, LinkName, gets mac and addr.
func (b *Bed) plug(n *namespace, port string, mac net.HardwareAddr, addr netip.Addr) error {
	return netns.Plug(b.bridge.Namespace, port, n.Namespace, LinkName, mac, netip.PrefixFrom(addr, Segment.Bits()))
}

// Close stops the speakers and the proxier, removes the Node and Pod objects
// it registered, and deletes every namespace (with them the bridge and
// every interface).
func (b *Bed) Close() error {
	var errs []error
	for _, n := range b.Nodes {
		errs = append(errs, n.StopSpeaker())
	}
	if b.proxier != nil {
		b.proxier.stop()
	}
	b.mu.Lock()
	for _, be := range b.backends {
		be.close()
	}
	b.mu.Unlock()
	ctx := context.Background()
	for _, n := range b.Nodes {
		n.api.Close()
		if n.ns == nil {
			continue
		}
		errs = append(errs, ignoreNotFound(b.cs.CoreV1().Pods(cluster.MetalLBNamespace).Delete(ctx, n.speakerPod(), metav1.DeleteOptions{})))
		errs = append(errs, ignoreNotFound(b.cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})))
	}
	for _, ns := range append(b.nodeNetns(), b.client, b.bridge) {
		if ns == nil {
			continue
		}
		errs = append(errs, ns.Delete())
		b.c.UnwatchNetns(ns.Name)
	}
	return errors.Join(errs...)
}

func (b *Bed) nodeNetns() []*namespace {
	var out []*namespace
	for _, n := range b.Nodes {
		if n.ns != nil {
			out = append(out, n.ns)
		}
	}
	return out
}

// Node returns the node called name, or nil.
func (b *Bed) Node(name string) *Node {
	for _, n := range b.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// nodeObject is the Node a node namespace registers; the speakers read its
// labels.
func nodeObject(o NodeOptions, addr netip.Addr) *corev1.Node {
	labels := map[string]string{corev1.LabelHostname: o.Name}
	maps.Copy(labels, o.Labels)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: addr.String()},
		}},
	}
}
