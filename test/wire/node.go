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
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cozystack/address-controller/test/cluster"
	"github.com/cozystack/address-controller/test/netns"
)

// speakerReadyTimeout bounds how long a speaker may take to open its ARP
// responder.
const speakerReadyTimeout = time.Minute

// memberlistPort is the port the speakers' memberlist binds, MetalLB's
// default.
const memberlistPort = "7946"

// Node is a node namespace: a Node object, an address on the bridge, and a
// MetalLB speaker.
type Node struct {
	Name string
	// Labels of its Node object.
	Labels map[string]string
	// Address is the node's address on the bridge.
	Address netip.Addr
	// MAC is the hardware address of its interface on the bridge: a speaker
	// answering from this node answers with it.
	MAC net.HardwareAddr

	bed *Bed
	ns  *namespace
	api *netns.APIProxy

	mu      sync.Mutex
	speaker *cluster.Process
}

func (b *Bed) addNode(ctx context.Context, i int, o NodeOptions) (*Node, error) {
	n := &Node{
		Name:    o.Name,
		Labels:  o.Labels,
		Address: Segment.Addr().Next(),
		MAC:     net.HardwareAddr{0x02, 0x00, 0xc0, 0x00, 0x02, byte(0x81 + i)},
		bed:     b,
	}
	for range i {
		n.Address = n.Address.Next()
	}
	var err error
	if n.ns, err = b.addNetns(fmt.Sprintf("n%d", i)); err != nil {
		return n, err
	}
	// The kernel answers ARP only for addresses of the interface the request
	// came in on (never for the loopback's), and never announces them as a
	// source: every answer for a load-balancer address comes from a speaker.
	if err := n.ns.sysctl(
		"net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.default.arp_ignore=1",
		"net.ipv4.conf.all.arp_announce=2", "net.ipv4.conf.default.arp_announce=2",
	); err != nil {
		return n, err
	}
	if err := b.plug(n.ns, fmt.Sprintf("p%d", i), n.MAC, n.Address); err != nil {
		return n, err
	}
	if err := n.startAPIProxy(); err != nil {
		return n, err
	}
	if _, err := b.cs.CoreV1().Nodes().Create(ctx, nodeObject(o, n.Address), metav1.CreateOptions{}); err != nil {
		return n, fmt.Errorf("registering node %s: %w", n.Name, err)
	}
	// The speaker looks up its own Pod at start, to own the status objects
	// it writes, and the speakers find each other's memberlist addresses in
	// their Pods' status. Nothing runs the Pod (there is no kubelet), so the
	// bed writes that status: the node's address, as a host-network Pod has.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: n.speakerPod(), Namespace: cluster.MetalLBNamespace, Labels: b.speakerLabels()},
		Spec: corev1.PodSpec{NodeName: n.Name, HostNetwork: true,
			Containers: []corev1.Container{{Name: "speaker", Image: "quay.io/metallb/speaker:v0.15.2"}}},
	}
	created, err := b.cs.CoreV1().Pods(cluster.MetalLBNamespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return n, fmt.Errorf("registering the speaker Pod of %s: %w", n.Name, err)
	}
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: n.Address.String(), PodIP: n.Address.String(),
		PodIPs: []corev1.PodIP{{IP: n.Address.String()}}}
	if _, err := b.cs.CoreV1().Pods(cluster.MetalLBNamespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return n, fmt.Errorf("writing the address of the speaker Pod of %s: %w", n.Name, err)
	}
	return n, nil
}

// speakerLabels label this bed's speaker Pods; the speakers look for each
// other by them (--ml-labels), so that a speaker of another bed in the same
// cluster is never taken for a member.
func (b *Bed) speakerLabels() map[string]string {
	return map[string]string{"app": "metallb", "component": "speaker", "wire-bed": b.id}
}

func (n *Node) speakerPod() string { return "speaker-" + n.Name }

// startAPIProxy forwards the API server's loopback address and port inside
// the node to the real one, so the speaker uses the cluster's kubeconfig
// unchanged.
func (n *Node) startAPIProxy() (err error) {
	n.api, err = netns.StartAPIProxy(n.ns.Namespace, n.bed.apiPort)
	return err
}

// StartSpeaker runs the MetalLB speaker inside the node, in layer-2 mode:
// native BGP that no peer uses (so no FRR), and memberlist on the node's
// address, encrypted, as MetalLB's chart runs it. It returns once the speaker
// has opened its ARP responder on LinkName.
//
// Memberlist is what makes a restarted speaker announce again. Without it,
// MetalLB elects among the Nodes its own Node watch has delivered when its
// configuration first loads, and a Node delivered later never starts another
// election: a speaker whose configuration loaded before its own Node was
// known stayed silent until its Services changed (docs/development.md, "The
// wire test bed"). With memberlist, it elects among the members, itself
// always one, and every member that joins starts another election.
func (n *Node) StartSpeaker(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.speaker != nil && n.speaker.Running() {
		return nil
	}
	c := n.bed.c
	logName := "speaker-" + n.Name
	before := len(readLog(c, logName))
	p, err := c.StartProcess(logName, "ip", "netns", "exec", n.ns.Name,
		filepath.Join(c.Assets.MetalLBDir, "speaker"),
		"--kubeconfig", c.Kubeconfig,
		"--node-name", n.Name,
		"--pod-name", n.speakerPod(),
		"--namespace", cluster.MetalLBNamespace,
		"--host", "127.0.0.1",
		"--port", "7472",
		"--log-level", "info",
		"--ml-bindaddr", n.Address.String(),
		"--ml-bindport", memberlistPort,
		"--ml-labels", labels.SelectorFromSet(n.bed.speakerLabels()).String(),
		"--ml-secret-key-path", n.bed.memberlistKeys,
	)
	if err != nil {
		return err
	}
	n.speaker = p
	deadline := time.Now().Add(speakerReadyTimeout)
	for {
		if !p.Running() {
			return fmt.Errorf("the speaker of %s exited:\n%s", n.Name, tail(p.Log(), 30))
		}
		log := p.Log()
		if len(log) > before && strings.Contains(log[before:], `"interface":"`+LinkName+`"`) &&
			strings.Contains(log[before:], "createARPResponder") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the speaker of %s opened no ARP responder on %s within %s:\n%s",
				n.Name, LinkName, speakerReadyTimeout, tail(log, 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// StopSpeaker stops the speaker gracefully.
func (n *Node) StopSpeaker() error { return n.endSpeaker((*cluster.Process).Stop) }

// KillSpeaker kills the speaker at once, as a crash would.
func (n *Node) KillSpeaker() error { return n.endSpeaker((*cluster.Process).Kill) }

// endSpeaker ends the running speaker, if any, with end; under the lock,
// so that a racing start or end sees it gone.
func (n *Node) endSpeaker(end func(*cluster.Process) error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.speaker == nil {
		return nil
	}
	p := n.speaker
	n.speaker = nil
	return end(p)
}

// SpeakerLog is what this node's speakers have logged in this run.
func (n *Node) SpeakerLog() string { return readLog(n.bed.c, "speaker-"+n.Name) }

func readLog(c *cluster.Cluster, name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
	return string(b)
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
