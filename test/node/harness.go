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
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/netns"
)

// The harness's address plan, all from ranges set aside for tests.
var (
	// segmentRange is where each harness takes a /24 for its segment
	// (RFC 2544's benchmarking range).
	segmentRange = netip.MustParsePrefix("198.18.0.0/16")
	// PodRange holds every node's Pod range, a /24 each, in node order
	// (RFC 6598's shared address space).
	PodRange = netip.MustParsePrefix("100.96.0.0/16")
	// ServiceRange is the cluster's IPv4 Service range, which the client
	// reaches through the first node's kube-proxy.
	ServiceRange = netip.MustParsePrefix(cluster.ServiceCIDRv4)
)

// Host numbers on a segment.
const (
	hostNumber   = 1
	firstNode    = 10
	clientNumber = 254
	maxNodes     = 50
)

// Image is a container image archive (docker save or OCI layout tarball)
// that ctr imports, and the reference it carries.
type Image struct {
	Ref     string
	Archive string
}

// NodeOptions describe one node: kubelet registers it with its Labels.
type NodeOptions = cluster.NodeOptions

// Options choose the harness's nodes.
type Options struct {
	// Cluster is the running control plane, started with WithWorkloads.
	Cluster *cluster.Cluster
	// Nodes are the nodes to start, at least one.
	Nodes []NodeOptions
	// SandboxImage is the pause image every Pod's sandbox runs, imported on
	// every node and pinned in containerd's configuration.
	SandboxImage Image
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// Harness is a set of running nodes on one segment.
type Harness struct {
	// Segment is the subnet of the bridge every node and the client are on.
	Segment netip.Prefix
	// HostAddress is the host's address on the segment, where the API
	// server's connections to kubelets come from.
	HostAddress netip.Addr
	// Nodes in the order they were asked for.
	Nodes []*Node
	// Client is a namespace on the segment, with routes to every Pod range
	// and to the Service range.
	Client *Client

	c       *cluster.Cluster
	cs      kubernetes.Interface
	assets  Assets
	sandbox Image
	log     func(format string, args ...any)
	id      string
	dir     string
	apiPort string

	bridge   *namespace
	hostLink string
}

var nodeName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// StartTestNodes starts the two nodes the node tests run on, node-a and
// node-b, printing progress on stdout; when they do not start, it keeps
// the cluster's folder for its logs.
func StartTestNodes(ctx context.Context, c *cluster.Cluster, sandbox Image) (*Harness, error) {
	began := time.Now()
	h, err := Start(ctx, Options{
		Cluster:      c,
		Nodes:        []NodeOptions{{Name: "node-a"}, {Name: "node-b"}},
		SandboxImage: sandbox,
		Log:          func(f string, args ...any) { fmt.Printf(f+"\n", args...) },
	})
	if err != nil {
		c.Keep()
		return nil, fmt.Errorf("starting the nodes (logs kept in %s): %w", c.Dir, err)
	}
	fmt.Printf("The harness started %d nodes in %s\n", len(h.Nodes), time.Since(began).Round(time.Millisecond))
	return h, nil
}

// Start builds the segment and starts every node, returning once each is
// Ready and its kube-proxy has programmed its rules. On error, whatever it
// built is removed again.
func Start(ctx context.Context, opts Options) (h *Harness, err error) {
	if err := CheckRequirements(); err != nil {
		return nil, err
	}
	if opts.Cluster == nil {
		return nil, errors.New("the node harness needs a running cluster (Options.Cluster)")
	}
	if len(opts.Nodes) == 0 || len(opts.Nodes) > maxNodes {
		return nil, fmt.Errorf("the node harness takes 1 to %d nodes, not %d", maxNodes, len(opts.Nodes))
	}
	seen := map[string]bool{}
	for _, n := range opts.Nodes {
		if !nodeName.MatchString(n.Name) {
			return nil, fmt.Errorf("node name %q is not a DNS label", n.Name)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("node name %q is given twice", n.Name)
		}
		seen[n.Name] = true
	}
	if opts.SandboxImage.Ref == "" || opts.SandboxImage.Archive == "" {
		return nil, errors.New("the node harness needs a sandbox (pause) image: Options.SandboxImage")
	}
	if _, err := os.Stat(opts.SandboxImage.Archive); err != nil {
		return nil, fmt.Errorf("sandbox image archive: %w", err)
	}
	assets, err := FindAssets(opts.Cluster)
	if err != nil {
		return nil, err
	}
	base, err := opts.Cluster.NewBed("acn-", 2)
	if err != nil {
		return nil, err
	}
	id := base.ID
	h = &Harness{
		c: opts.Cluster, cs: base.Clientset, assets: assets, sandbox: opts.SandboxImage, log: opts.Log,
		id: id, dir: filepath.Join(opts.Cluster.Dir, "nodes-"+id), apiPort: base.APIPort, hostLink: id,
	}
	if h.log == nil {
		h.log = func(string, ...any) {}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Close())
			h = nil
		}
	}()
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return h, err
	}
	if h.Segment, err = freeSegment(); err != nil {
		return h, err
	}
	h.HostAddress = hostAt(h.Segment, hostNumber)
	h.log("Building segment %s for %d node(s) (%s)", h.Segment, len(opts.Nodes), h.id)
	if err := h.buildSegment(); err != nil {
		return h, err
	}
	for i, o := range opts.Nodes {
		n := h.newNode(i, o)
		h.Nodes = append(h.Nodes, n) // so that Close removes what it built
		if err := n.start(ctx); err != nil {
			return h, fmt.Errorf("node %s: %w", n.Name, err)
		}
		h.log("Node %s is Ready at %s, Pods %s, after %s", n.Name, n.Address, n.PodCIDR, n.StartTime.Round(time.Millisecond))
	}
	if err := h.routePods(); err != nil {
		return h, err
	}
	// The API server reaches webhooks, aggregated APIs and kubelets from
	// the first node, as through a konnectivity agent there.
	first := h.Nodes[0]
	if err := h.c.SetClusterDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		return first.ns.dial(ctx, addr)
	}); err != nil {
		return h, err
	}
	return h, nil
}

// freeSegment picks a /24 of segmentRange that no route of the host's
// overlaps (another harness's segment, say).
func freeSegment() (netip.Prefix, error) {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return netip.Prefix{}, err
	}
	for range 64 {
		third, _ := rand.Int(rand.Reader, big.NewInt(256))
		base := segmentRange.Addr().As4()
		base[2] = byte(third.Int64())
		p := netip.PrefixFrom(netip.AddrFrom4(base), 24)
		taken := false
		for _, r := range routes {
			if r.Dst == nil {
				continue
			}
			dst, ok := netip.AddrFromSlice(r.Dst.IP)
			ones, _ := r.Dst.Mask.Size()
			// A default route overlaps everything and routes nothing of ours.
			if ok && ones > 0 && netip.PrefixFrom(dst.Unmap(), ones).Overlaps(p) {
				taken = true
				break
			}
		}
		if !taken {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /24 in %s", segmentRange)
}

// hostAt is host number i of segment p.
func hostAt(p netip.Prefix, i int) netip.Addr {
	a := p.Masked().Addr().As4()
	a[3] = byte(i)
	return netip.AddrFrom4(a)
}

// podCIDR is node i's Pod range.
func podCIDR(i int) netip.Prefix {
	a := PodRange.Addr().As4()
	a[2] = byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(a), 24)
}

// addNamespace makes a namespace named after the harness and has the
// cluster's watchdog delete it if the test process dies.
func (h *Harness) addNamespace(role string) (*namespace, error) {
	n, err := h.c.AddNetns(h.id + "-" + role)
	if err != nil {
		return nil, err
	}
	return &namespace{n}, nil
}

// buildSegment makes the bridge (in a namespace of its own), the host's
// port on it and the client.
func (h *Harness) buildSegment() error {
	var err error
	if h.bridge, err = h.addNamespace("br"); err != nil {
		return err
	}
	if err := netns.AddBridge(h.bridge.Namespace); err != nil {
		return err
	}
	// The host's end: deleting the bridge's namespace deletes its peer,
	// and with it this end, however the test ends.
	if err := netlink.LinkAdd(&netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: h.hostLink},
		PeerName:  "host", PeerNamespace: netlink.NsFd(h.bridge.Fd()),
	}); err != nil {
		return fmt.Errorf("the host's port: %w", err)
	}
	if err := netns.Attach(h.bridge.Namespace, "host"); err != nil {
		return err
	}
	host, err := netlink.NewHandle()
	if err != nil {
		return err
	}
	defer host.Close()
	if err := netns.SetUp(host, h.hostLink, netip.PrefixFrom(h.HostAddress, h.Segment.Bits())); err != nil {
		return err
	}
	client, err := h.addNamespace("client")
	if client != nil {
		h.Client = &Client{ns: client, Address: hostAt(h.Segment, clientNumber)}
	}
	if err != nil {
		return err
	}
	return h.plug(client, "client", h.Client.Address)
}

// linkName is a namespace's interface on the segment.
const linkName = "eth0"

// plug connects namespace n to the bridge through a veth pair whose inside
// end, linkName, gets addr.
func (h *Harness) plug(n *namespace, port string, addr netip.Addr) error {
	return netns.Plug(h.bridge.Namespace, port, n.Namespace, linkName, nil, netip.PrefixFrom(addr, h.Segment.Bits()))
}

// routePods gives every node a route to every other node's Pods, and the
// client a route to every node's Pods and to the Services through the
// first node: what a cloud's route controller or kindnet does. Each node
// also gets a route to the Services over the segment, standing in for the
// default route a node has: a connection its own processes (host-network
// Pods, the API server's egress) open to a ClusterIP needs a route before
// kube-proxy's rules send it to a Pod.
func (h *Harness) routePods() error {
	for _, n := range h.Nodes {
		if err := n.ns.route(ServiceRange, netip.Addr{}); err != nil {
			return err
		}
		for _, m := range h.Nodes {
			if m != n {
				if err := n.ns.route(m.PodCIDR, m.Address); err != nil {
					return err
				}
			}
		}
		if err := h.Client.ns.route(n.PodCIDR, n.Address); err != nil {
			return err
		}
	}
	return h.Client.ns.route(ServiceRange, h.Nodes[0].Address)
}

// ImportImage imports an image archive into every node's containerd, where
// Pods with imagePullPolicy Never find it.
func (h *Harness) ImportImage(ctx context.Context, archive string) error {
	for _, n := range h.Nodes {
		if err := n.ImportImage(ctx, archive); err != nil {
			return err
		}
	}
	return nil
}

// LogTails is the last lines of every node daemon's log, for a failure
// message.
func (h *Harness) LogTails(lines int) string {
	var b strings.Builder
	for _, n := range h.Nodes {
		for _, daemon := range slices.Sorted(maps.Keys(n.Logs())) {
			fmt.Fprintf(&b, "--- %s %s\n%s\n", n.Name, daemon, tail(n.Logs()[daemon], lines))
		}
	}
	return b.String()
}

// Node returns the node called name, or nil.
func (h *Harness) Node(name string) *Node {
	for _, n := range h.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Close stops every node, deletes their Node objects, and removes every
// namespace (with them the bridge and every interface, the host's too) and
// cgroup the harness made. The nodes' folders stay in the cluster's, which
// its Stop removes (unless it keeps them, CLUSTER_KEEP_DIR=1).
func (h *Harness) Close() error {
	var errs []error
	if len(h.Nodes) > 0 {
		errs = append(errs, h.c.SetClusterDialer(nil))
	}
	for _, n := range h.Nodes {
		errs = append(errs, n.close())
	}
	if h.Client != nil {
		errs = append(errs, h.Client.ns.Delete())
		h.c.UnwatchNetns(h.Client.ns.Name)
	}
	if h.bridge != nil {
		errs = append(errs, h.bridge.Delete())
		h.c.UnwatchNetns(h.bridge.Name)
	}
	return errors.Join(errs...)
}
