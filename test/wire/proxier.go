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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cozystack/address-controller/test/netns"
)

// proxier does on every node what kube-proxy's IPVS mode does for
// load-balancer addresses: every address a LoadBalancer Service reports is
// bound to the node's loopback (IPVS mode's kube-ipvs0; so the kernel accepts
// packets for it, and, with arp_ignore=1, never answers ARP for it), and a
// connection to it is handed to a ready endpoint of the Service that reports
// the address on that port, or refused when there is none. Like IPVS, it
// keys a virtual server by address and port, so two Services sharing an
// address (a hold and its workload, during a shared handoff) each keep
// their own ports. It forwards in user space, through the node's own routing
// to the pod address; see docs/development.md for why.
type proxier struct {
	bed      *Bed
	stopCh   chan struct{}
	wake     chan struct{}
	done     chan struct{}
	slices   discoverylisters.EndpointSliceLister
	services cache.Store
	picks    atomic.Uint64

	mu        sync.Mutex
	vips      map[netip.Addr]vip // what the loopback holds on every node
	listeners map[int32][]net.Listener
	// left records, per address and port, when the proxier last stopped
	// handing it to a Service, keyed by that Service.
	left map[servedPort]time.Time
	// refusals are the latest connections it closed unforwarded, oldest
	// first, at most maxRefusals.
	refusals []Refusal
}

// maxRefusals bounds the refusals a proxier keeps: a few seconds of probes
// at 100 Hz.
const maxRefusals = 1000

// Refusal is a connection the proxier closed without forwarding it.
type Refusal struct {
	At   time.Time
	Node string
	// To is the address and port the connection reached.
	To  netip.AddrPort
	Why string
}

// servedPort is one Service's port on one address.
type servedPort struct {
	addr            netip.Addr
	port            int32
	namespace, name string
}

// vip is what a load-balancer address leads to: a virtual server per port.
type vip map[int32]virtualServer

// virtualServer is one Service port behind an address.
type virtualServer struct {
	namespace, name string
	// portName names the Service port; ports counts the Service's TCP ports.
	portName string
	ports    int
}

func startProxier(b *Bed) (*proxier, error) {
	p := &proxier{bed: b, stopCh: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{}),
		vips: map[netip.Addr]vip{}, listeners: map[int32][]net.Listener{},
		left: map[servedPort]time.Time{}}
	f := informers.NewSharedInformerFactory(b.cs, 0)
	svcInformer := f.Core().V1().Services().Informer()
	sliceInformer := f.Discovery().V1().EndpointSlices()
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.poke() },
		UpdateFunc: func(any, any) { p.poke() },
		DeleteFunc: func(any) { p.poke() },
	}
	if _, err := svcInformer.AddEventHandler(poke); err != nil {
		return nil, err
	}
	p.services = svcInformer.GetStore()
	p.slices = sliceInformer.Lister()
	_ = sliceInformer.Informer()
	f.Start(p.stopCh)
	for typ, ok := range f.WaitForCacheSync(p.stopCh) {
		if !ok {
			close(p.stopCh)
			return nil, fmt.Errorf("the proxier's cache of %v did not sync", typ)
		}
	}
	go p.run()
	p.poke()
	return p, nil
}

func (p *proxier) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *proxier) stop() {
	close(p.stopCh)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ls := range p.listeners {
		for _, l := range ls {
			_ = l.Close()
		}
	}
}

func (p *proxier) run() {
	defer close(p.done)
	for {
		select {
		case <-p.stopCh:
			return
		case <-p.wake:
		}
		if err := p.sync(); err != nil {
			p.bed.log("Proxier: %v; retrying", err)
			time.AfterFunc(100*time.Millisecond, p.poke)
		}
	}
}

// sync makes every node's loopback hold exactly the addresses Services
// report, and listens on every Service port.
func (p *proxier) sync() error {
	want := map[netip.Addr]vip{}
	for _, o := range p.services.List() {
		svc := o.(*corev1.Service)
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		var tcp []corev1.ServicePort
		for _, port := range svc.Spec.Ports {
			if port.Protocol == corev1.ProtocolTCP || port.Protocol == "" {
				tcp = append(tcp, port)
			}
		}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			a, err := netip.ParseAddr(in.IP)
			if err != nil || !a.Is4() {
				continue
			}
			if want[a] == nil {
				want[a] = vip{}
			}
			for _, port := range tcp {
				want[a][port.Port] = virtualServer{namespace: svc.Namespace, name: svc.Name, portName: port.Name, ports: len(tcp)}
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for a, had := range p.vips {
		for port, vs := range had {
			if w, ok := want[a][port]; !ok || w.namespace != vs.namespace || w.name != vs.name {
				p.left[servedPort{a, port, vs.namespace, vs.name}] = now
			}
		}
	}
	for a, v := range want {
		if _, ok := p.vips[a]; !ok {
			for _, n := range p.bed.Nodes {
				if err := n.ns.ip("addr", "replace", netip.PrefixFrom(a, 32).String(), "dev", localLink); err != nil {
					return err
				}
			}
		}
		p.vips[a] = v
		for port := range v {
			if err := p.listen(port); err != nil {
				return err
			}
		}
	}
	for a := range p.vips {
		if _, ok := want[a]; ok {
			continue
		}
		for _, n := range p.bed.Nodes {
			if err := n.ns.ip("addr", "del", netip.PrefixFrom(a, 32).String(), "dev", localLink); err != nil {
				return err
			}
		}
		delete(p.vips, a)
	}
	return nil
}

// listen opens port on every node once; called with p.mu held.
func (p *proxier) listen(port int32) error {
	if _, ok := p.listeners[port]; ok {
		return nil
	}
	var ls []net.Listener
	for _, n := range p.bed.Nodes {
		l, err := n.ns.Listen(":" + strconv.Itoa(int(port)))
		if err != nil {
			for _, l := range ls {
				_ = l.Close()
			}
			return err
		}
		ls = append(ls, l)
		go p.serve(n, l)
	}
	p.listeners[port] = ls
	return nil
}

func (p *proxier) serve(n *Node, l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go p.forward(n, c)
	}
}

// forward hands a connection to a ready endpoint of the Service whose
// address it reached, or closes it when there is none, and records why: a
// client sees only a closed connection.
func (p *proxier) forward(n *Node, c net.Conn) {
	local := c.LocalAddr().(*net.TCPAddr)
	addr, _ := netip.AddrFromSlice(local.IP)
	refuse := func(why string, args ...any) {
		_ = c.Close()
		p.refused(Refusal{Node: n.Name, To: netip.AddrPortFrom(addr.Unmap(), uint16(local.Port)), Why: fmt.Sprintf(why, args...)})
	}
	p.mu.Lock()
	vs, served := p.vips[addr.Unmap()][int32(local.Port)]
	p.mu.Unlock()
	if !served {
		refuse("no Service reports that address and port")
		return
	}
	target, ok := p.pick(vs)
	if !ok {
		refuse("%s/%s has no ready endpoint", vs.namespace, vs.name)
		return
	}
	up, err := n.ns.Dial(context.Background(), target, time.Second)
	if err != nil {
		refuse("dialling %s/%s's endpoint %s: %v", vs.namespace, vs.name, target, err)
		return
	}
	netns.Pipe(c, up)
}

// pick chooses a ready endpoint of the virtual server's Service, in turn.
func (p *proxier) pick(vs virtualServer) (string, bool) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: vs.name})
	eps, err := p.slices.EndpointSlices(vs.namespace).List(sel)
	if err != nil {
		return "", false
	}
	var ready []string
	for _, s := range eps {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var port int32
		for _, sp := range s.Ports {
			if sp.Port != nil && (sp.Name == nil && vs.portName == "" || sp.Name != nil && *sp.Name == vs.portName) {
				port = *sp.Port
			}
		}
		// A slice of one port serves a Service of one port, whatever the
		// names say.
		if port == 0 && len(s.Ports) == 1 && s.Ports[0].Port != nil && vs.ports == 1 {
			port = *s.Ports[0].Port
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				ready = append(ready, net.JoinHostPort(a, strconv.Itoa(int(port))))
			}
		}
	}
	if len(ready) == 0 {
		return "", false
	}
	return ready[p.picks.Add(1)%uint64(len(ready))], true
}

// Holds reports whether the node's loopback holds addr, as read from the
// kernel.
func (n *Node) Holds(addr netip.Addr) (bool, error) {
	held := false
	err := n.ns.Do(func() error {
		ifi, err := net.InterfaceByName(localLink)
		if err != nil {
			return err
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if x, ok := netip.AddrFromSlice(ipn.IP); ok && x.Unmap() == addr {
					held = true
				}
			}
		}
		return nil
	})
	return held, err
}

// refused records r, stamped under the lock so that the record stays in
// time order.
func (p *proxier) refused(r Refusal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.At = time.Now()
	if len(p.refusals) == maxRefusals {
		p.refusals = slices.Delete(p.refusals, 0, maxRefusals/2)
	}
	p.refusals = append(p.refusals, r)
}

// Refused returns the connections the proxier closed without forwarding
// them, from from on, as far back as it keeps them: a probe that failed
// with a closed connection failed there, and a Refusal says why.
func (b *Bed) Refused(from time.Time) []Refusal {
	b.proxier.mu.Lock()
	defer b.proxier.mu.Unlock()
	i, _ := slices.BinarySearchFunc(b.proxier.refusals, from, func(r Refusal, t time.Time) int { return r.At.Compare(t) })
	return slices.Clone(b.proxier.refusals[i:])
}

// StoppedServing reports when the proxier last stopped handing connections
// to addr:port to the Service namespace/name, as it changed its own table:
// a probe that ended before then cannot have failed for that reason.
func (b *Bed) StoppedServing(addr netip.Addr, port int32, namespace, name string) (time.Time, bool) {
	b.proxier.mu.Lock()
	defer b.proxier.mu.Unlock()
	at, ok := b.proxier.left[servedPort{addr, port, namespace, name}]
	return at, ok
}
