//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/e2e/harness"
	"github.com/cozystack/address-controller/test/testkit"
	"github.com/cozystack/address-controller/test/wire"
)

// The wire specs' own bounds: a class's range inside wire.LoadBalancerRange,
// the rate the client probes at, and how long an answer must hold to count.
const (
	wireNamespace = "tenant-wire"
	wireRange     = "198.51.100.200/29"
	probeEvery    = 10 * time.Millisecond // 100 Hz; the issue asks for at least 50
	steady        = time.Second
	arpWindow     = 300 * time.Millisecond
	// recoverWithin bounds how long after its restart a speaker may take to
	// answer again.
	recoverWithin = 75 * time.Second
	zoneLabel     = "wire.address-controller.test/zone"
)

// The wire specs carry Label("wire"): the kind path filters them out, since a
// kind cluster's nodes are containers the test bed cannot plug into.
var _ = Describe("On the wire", Ordered, Label("wire"), func() {
	var (
		bed          *wire.Bed
		nodeA, nodeB *wire.Node
		web1, web2   *wire.Backend
		x            netip.Addr
	)

	BeforeAll(func(ctx SpecContext) {
		local, ok := h.(*harness.Local)
		if !ok {
			Fail("the wire test bed runs beside the local harness only: a kind cluster's nodes are containers; " +
				"run with -ginkgo.label-filter='!wire' there, as hack/kind-e2e.sh does")
		}
		Expect(wire.CheckRequirements()).To(Succeed(), "see the requirements in README.md")
		var err error
		bed, err = wire.Start(ctx, wire.Options{
			Cluster: local.Cluster,
			Nodes: []wire.NodeOptions{
				{Name: "wire-a", Labels: map[string]string{zoneLabel: "a"}},
				{Name: "wire-b", Labels: map[string]string{zoneLabel: "b"}},
			},
			Log: func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) },
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(bed.Close()).To(Succeed()) })
		nodeA, nodeB = bed.Node("wire-a"), bed.Node("wire-b")
		web1, err = bed.StartBackend("web-1", nodeA)
		Expect(err).NotTo(HaveOccurred())
		web2, err = bed.StartBackend("web-2", nodeA)
		Expect(err).NotTo(HaveOccurred())

		// The namespace, the class and its claim serve every spec: they go
		// once the last is over.
		t := newTidy()
		t.namespace(ctx, wireNamespace)
		t.own(b.Class("wire", ""))
		apply(ctx, testkit.ClassYAML("wire", metallbProvisioner, `
  parameters: {addresses: ["`+wireRange+`"]}
`)+"---"+testkit.ClaimYAML(wireNamespace, "web", "wire"))
		Eventually(kit.StateOfClaim(Default, wireNamespace, "web"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		x = netip.MustParseAddr(kit.Claim(Default, wireNamespace, "web").Status.Addresses[0].Address)
		Expect(wire.LoadBalancerRange.Contains(x)).To(BeTrue())
	}, NodeTimeout(3*time.Minute))

	It("keeps a held address dark: no ARP answer and no connection, though every node's kernel holds it", func(ctx SpecContext) {
		Eventually(func() []string { return holders(x.String()) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))
		for _, n := range bed.Nodes {
			Eventually(n.Holds).WithArguments(x).WithTimeout(timeout).WithPolling(tick).Should(BeTrue(),
				"the proxier binds %s to the loopback of %s", x, n.Name)
		}
		Consistently(darkness(ctx, bed, x), 2*time.Second, 400*time.Millisecond).Should(Succeed())
	})

	It("answers on the address once Service A names the claim, and records how long that took", func(ctx SpecContext) {
		Expect(bed.WriteEndpoints(ctx, wireNamespace, "a", web1.Endpoint(true))).To(Succeed())
		created := time.Now()
		apply(ctx, testkit.ClaimingServiceYAML(wireNamespace, "a", "web"))
		probes := bed.ProbeSeries(ctx, x, wire.ProbeOptions{Interval: probeEvery, Duration: timeout,
			Until: func(ps []wire.Probe) bool { _, ok := wire.FirstSuccessAfter(ps, created); return ok }})
		first, ok := wire.FirstSuccessAfter(probes, created)
		Expect(ok).To(BeTrue(), "no answer on %s within %s of creating Service A", x, timeout)
		Expect(first.Body).To(Equal(web1.Name))
		answered := first.At.Add(first.Took).Sub(created)
		AddReportEntry("time from Service A's creation to the first answer", answered.String())
		GinkgoWriter.Printf("First answer on %s %s after Service A was created (%d probes)\n", x, answered, len(probes))
		Expect(bed.WhoHas(x, arpWindow)).To(HaveLen(1), "exactly one speaker answers for %s", x)
	})

	It("answers again on the same address when A is deleted and rebuilt as B, and measures the outage at 100 Hz", func(ctx SpecContext) {
		var deleted time.Time
		series := make(chan []wire.Probe, 1)
		started := make(chan struct{})
		var once sync.Once
		go func() {
			defer GinkgoRecover()
			series <- bed.ProbeSeries(ctx, x, wire.ProbeOptions{Interval: probeEvery, Duration: 90 * time.Second,
				Until: func(ps []wire.Probe) bool {
					if len(ps) >= 20 {
						once.Do(func() { close(started) })
					}
					return answeredSteadilyBy(ps, web2.Name, steady)
				}})
		}()
		Eventually(started, 10*time.Second).Should(BeClosed())
		deleted = time.Now()
		_, err := kubectl(ctx, "", "-n", wireNamespace, "delete", "service", "a")
		Expect(err).NotTo(HaveOccurred())
		Expect(bed.DeleteEndpoints(ctx, wireNamespace, "a")).To(Succeed())
		Expect(bed.WriteEndpoints(ctx, wireNamespace, "b", web2.Endpoint(true))).To(Succeed())
		apply(ctx, testkit.ClaimingServiceYAML(wireNamespace, "b", "web"))

		var probes []wire.Probe
		Eventually(series, 2*time.Minute).Should(Receive(&probes))
		Expect(probes[len(probes)-1].Body).To(Equal(web2.Name), "B's workload answers on %s", x)
		Expect(probeRate(probes)).To(BeNumerically(">=", 50), "probes per second")
		o := wire.OutageAfter(probes, deleted)
		Expect(o.Recovered).To(BeTrue())
		AddReportEntry("rebuild outage", fmt.Sprintf("%d failed probes, %d ms", o.Failed, o.Duration.Milliseconds()))
		GinkgoWriter.Printf("Rebuild A -> B on %s: %d failed probes of %d, outage %s, %.0f probes/s\n",
			x, o.Failed, len(probes), o.Duration, probeRate(probes))
		Expect(holders(x.String())).To(Equal([]string{wireNamespace + "/b"}))
	})

	It("goes dark when B's annotation is removed, staying Bound and held, and answers again when it is added back", func(ctx SpecContext) {
		svc := &corev1.Service{}
		svc.Namespace, svc.Name = wireNamespace, "b"
		kit.SetAnnotation(Default, svc, v1alpha1.AnnotationIPAddressClaim, "")
		Eventually(darkness(ctx, bed, x), timeout, tick).Should(Succeed())
		Consistently(darkness(ctx, bed, x), 2*time.Second, 400*time.Millisecond).Should(Succeed())
		Expect(kit.StateOfClaim(Default, wireNamespace, "web")()).To(HaveField("Phase", v1alpha1.ClaimBound))
		name := kit.Claim(Default, wireNamespace, "web").Status.Addresses[0].Name
		Expect(kit.StateOfAddress(Default, name)()).To(HaveField("Phase", v1alpha1.AddressBound))
		Eventually(func() []string { return holders(x.String()) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))

		kit.SetAnnotation(Default, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		Eventually(answer(ctx, bed, x), timeout, tick).Should(Equal(web2.Name))
	})

	It("keeps B answering through every step of a shared dissociation and re-association, failing no more probes than while B stays put", func(ctx SpecContext) {
		name := kit.Claim(Default, wireNamespace, "web").Status.Addresses[0].Name
		associated := func() string {
			return testkit.Reason(kit.Address(Default, name).Status.Conditions, v1alpha1.ConditionAssociated)
		}
		Eventually(associated, timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
		Eventually(func() []string { return holders(x.String()) }, timeout, tick).Should(Equal([]string{wireNamespace + "/b"}))

		// One series at 100 Hz through three windows, while the client
		// forgets its neighbours every quarter second, so that its probes
		// also depend on a speaker answering ARP: B left alone (the
		// baseline); B's annotation removed, up to the moment the driver
		// unpins B, its hold back beside it; and the annotation back, from
		// B's first answer until the handoff has ended and a second has
		// passed.
		var stop atomic.Bool
		series := make(chan []wire.Probe, 1)
		go func() {
			defer GinkgoRecover()
			// A second per probe: an address nobody answers ARP for still
			// fails (the kernel retries ARP each second), while a probe
			// slowed by a busy machine during the handoff does not.
			series <- bed.ProbeSeries(ctx, x, wire.ProbeOptions{Interval: probeEvery, Timeout: time.Second,
				Duration: 2 * time.Minute, Until: func([]wire.Probe) bool { return stop.Load() }})
		}()
		forgetting := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(forgetting)
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for ; !stop.Load(); <-t.C {
				Expect(bed.ForgetNeighbours()).To(Succeed())
			}
		}()
		DeferCleanup(func() { stop.Store(true); <-forgetting })

		baseline := time.Now()
		time.Sleep(3 * time.Second)

		// A watch sees the driver unpin B as soon as MetalLB's controller
		// can, before MetalLB, the speaker or the proxier acts on it.
		unpinnedAt := make(chan time.Time, 1)
		wc, err := client.NewWithWatch(h.Config(), client.Options{Scheme: manager.NewScheme()})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &corev1.ServiceList{}, client.InNamespace(wireNamespace),
			client.MatchingFields{"metadata.name": "b"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)
		go func() {
			defer GinkgoRecover()
			for ev := range w.ResultChan() {
				if s, ok := ev.Object.(*corev1.Service); ok {
					if _, pinned := s.Annotations[v1alpha1.AnnotationPinnedBy]; !pinned {
						unpinnedAt <- time.Now()
						return
					}
				}
			}
		}()

		dissociated := time.Now()
		svc := &corev1.Service{}
		svc.Namespace, svc.Name = wireNamespace, "b"
		kit.SetAnnotation(Default, svc, v1alpha1.AnnotationIPAddressClaim, "")
		var unpinned time.Time
		Eventually(unpinnedAt, timeout).Should(Receive(&unpinned))
		carries := func() bool {
			for _, in := range kit.Service(Default, wireNamespace, "b").Status.LoadBalancer.Ingress {
				if in.IP == x.String() {
					return true
				}
			}
			return false
		}
		Eventually(carries, timeout, tick).Should(BeFalse())
		Eventually(func() []string { return holders(x.String()) }, timeout, tick).Should(ConsistOf(HavePrefix(h.PlaceholderNamespace() + "/")))
		// The hold came back beside B before the driver unpinned B. B goes
		// dark only after that unpin, once MetalLB has taken the address off
		// B and the speaker or the proxier has acted on it; a probe that
		// ended before the unpin was seen, or before the proxier stopped
		// handing B's port to B, cannot have failed for that reason.
		off := unpinned
		if stopped, ok := bed.StoppedServing(x, 80, wireNamespace, "b"); ok && stopped.After(dissociated) && stopped.Before(off) {
			off = stopped
		}

		reassociated := time.Now()
		kit.SetAnnotation(Default, svc, v1alpha1.AnnotationIPAddressClaim, "web")
		Eventually(associated, timeout, tick).Should(Equal(driver.ReasonSharedHandoff))
		Eventually(func() []string { return holders(x.String()) }, timeout, tick).Should(Equal([]string{wireNamespace + "/b"}))
		time.Sleep(steady)
		ended := time.Now()
		stop.Store(true)
		var probes []wire.Probe
		Eventually(series, 10*time.Second).Should(Receive(&probes))
		Expect(probeRate(probes)).To(BeNumerically(">=", 50), "probes per second")

		alone := failedBetween(probes, baseline, dissociated)
		letGo := failedBetween(probes, dissociated, off)
		first, ok := wire.FirstSuccessAfter(probes, reassociated)
		Expect(ok).To(BeTrue(), "B answers again once it names the claim")
		takenBack := failedBetween(probes, first.At, ended)
		AddReportEntry("failed probes, B alone / shared dissociation / shared re-association",
			fmt.Sprintf("%d / %d / %d", alone, letGo, takenBack))
		GinkgoWriter.Printf("Shared handoff on a live Service: %d failed probes in 3 s alone, %d while let go (%s), "+
			"%d once answering again (%s); %.0f probes/s\n", alone, letGo, off.Sub(dissociated), takenBack,
			ended.Sub(first.At), probeRate(probes))
		for _, p := range probes {
			if !p.OK() && !p.At.Before(baseline) {
				GinkgoWriter.Printf("  failed probe at +%s, took %s: %v\n", p.At.Sub(baseline), p.Took, p.Err)
			}
		}
		for _, r := range bed.Refused(baseline) {
			GinkgoWriter.Printf("  the proxier on %s closed a connection to %s at +%s: %s\n", r.Node, r.To, r.At.Sub(baseline), r.Why)
		}
		GinkgoWriter.Printf("  dissociated +%s, B left +%s, reassociated +%s, answered +%s, ended +%s\n",
			dissociated.Sub(baseline), off.Sub(baseline), reassociated.Sub(baseline), first.At.Sub(baseline), ended.Sub(baseline))
		Expect(letGo).To(BeNumerically("<=", alone), "B fails no more probes while the hold comes back beside it than when left alone")
		Expect(takenBack).To(BeNumerically("<=", alone), "B fails no more probes while its hold goes than when left alone")
	})

	It("is answered by the node the class's L2 parameters choose, from the interfaces they name", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) { setL2(ctx, `{}`) })
		zone := func(n *wire.Node) string {
			return fmt.Sprintf(`"nodeSelectors": [{"matchLabels": {%q: %q}}]`, zoneLabel, n.Labels[zoneLabel])
		}
		for _, n := range []*wire.Node{nodeA, nodeB, nodeA} {
			setL2(ctx, "{"+zone(n)+"}")
			Eventually(answerer(bed, x), timeout, tick).Should(Equal([]string{n.Name}))
			Eventually(answer(ctx, bed, x), timeout, tick).Should(Equal(web2.Name))
		}
		// Moving to B, on an interface B lacks: A stops, B cannot start.
		setL2(ctx, `{"interfaces": ["eth9"], `+zone(nodeB)+`}`)
		Eventually(darkness(ctx, bed, x), timeout, tick).Should(Succeed())
		Consistently(darkness(ctx, bed, x), time.Second, 400*time.Millisecond).Should(Succeed())
		setL2(ctx, `{"interfaces": ["`+wire.LinkName+`"], `+zone(nodeB)+`}`)
		Eventually(answerer(bed, x), timeout, tick).Should(Equal([]string{nodeB.Name}))
		Eventually(answer(ctx, bed, x), timeout, tick).Should(Equal(web2.Name))
	})

	It("recovers when the answering node's speaker restarts, and measures the outage a newly arrived client sees", func(ctx SpecContext) {
		var nodes []*wire.Node
		Eventually(func() (err error) { nodes, err = bed.WhoHas(x, arpWindow); return err }).WithTimeout(timeout).Should(Succeed())
		Expect(nodes).To(HaveLen(1))
		announcer := nodes[0]

		series := make(chan []wire.Probe, 1)
		started := make(chan struct{})
		var once sync.Once
		restarted := time.Time{}
		restartedAt := make(chan time.Time, 1)
		go func() {
			defer GinkgoRecover()
			// The series runs until the restarted speaker has answered
			// steadily, or recoverWithin after the restart: its bound counts
			// from the restart, not from the kill, as a loaded machine may
			// take most of a minute to start the speaker again.
			series <- bed.ProbeSeries(ctx, x, wire.ProbeOptions{Interval: probeEvery, Duration: wire.MaxProbeDuration,
				Until: func(ps []wire.Probe) bool {
					if len(ps) >= 20 {
						once.Do(func() { close(started) })
					}
					select {
					case restarted = <-restartedAt:
					default:
					}
					if restarted.IsZero() {
						return false
					}
					since := ps[len(ps)-1].At.Sub(restarted)
					return since > recoverWithin || answeredSteadilyBy(ps, web2.Name, steady) && since > steady
				}})
		}()
		Eventually(started, 10*time.Second).Should(BeClosed())
		killed := time.Now()
		Expect(announcer.KillSpeaker()).To(Succeed())
		// A client arriving now (or whose cache expires) must ask again; only
		// the dead speaker would answer.
		Expect(bed.ForgetNeighbours()).To(Succeed())
		Consistently(answerer(bed, x), time.Second, 200*time.Millisecond).Should(BeEmpty())
		logged := len(announcer.SpeakerLog())
		Expect(announcer.StartSpeaker(ctx)).To(Succeed())
		speakerBack := time.Now()
		restartedAt <- speakerBack

		var probes []wire.Probe
		Eventually(series, wire.MaxProbeDuration+30*time.Second).Should(Receive(&probes))
		// Nothing answers between the kill and the restart, unless the
		// restart outlasts the 4 s the other speaker's memberlist suspects
		// the killed one before it takes over; so the first answer after the
		// restart ends the outage (at worst it counts a takeover's answers
		// as failures too). A probe that fails later, on a loaded machine, is
		// not part of it.
		back, ok := wire.FirstSuccessAfter(probes, speakerBack)
		Expect(ok).To(BeTrue(), "%s answered again within %s of the speaker's restart; what its log says since of announcing:\n%s\nand its last lines:\n%s",
			x, recoverWithin, announcing(announcer.SpeakerLog()[logged:]), lastLines(announcer.SpeakerLog()[logged:], 20))
		o := wire.OutageAfter(slices.DeleteFunc(slices.Clone(probes), func(p wire.Probe) bool { return p.At.After(back.At) }), killed)
		Expect(o.Recovered).To(BeTrue())
		Expect(o.Failed).To(BeNumerically(">", 0), "the client could not reach %s while no speaker answered", x)
		AddReportEntry("speaker restart outage", fmt.Sprintf("%d failed probes, %d ms", o.Failed, o.Duration.Milliseconds()))
		GinkgoWriter.Printf("Speaker restart on %s: %d failed probes, outage %s (the speaker was down at least 1s), "+
			"%d failed probes after it answered again\n", announcer.Name, o.Failed, o.Duration, failedBetween(probes, back.At, time.Now()))
	})

	It("does not announce a Service with no ready endpoints, and does once one is ready", func(ctx SpecContext) {
		apply(ctx, `
apiVersion: local.sdn.cozystack.io/v1alpha1
kind: IPAddressClaim
metadata: {name: idle, namespace: `+wireNamespace+`}
spec: {className: wire}
`)
		Eventually(kit.StateOfClaim(Default, wireNamespace, "idle"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		y := netip.MustParseAddr(kit.Claim(Default, wireNamespace, "idle").Status.Addresses[0].Address)
		Expect(bed.WriteEndpoints(ctx, wireNamespace, "idle", web1.Endpoint(false))).To(Succeed())
		apply(ctx, testkit.ClaimingServiceYAML(wireNamespace, "idle", "idle"))
		Eventually(func() []string { return holders(y.String()) }, timeout, tick).Should(Equal([]string{wireNamespace + "/idle"}))
		Consistently(darkness(ctx, bed, y), 2*time.Second, 400*time.Millisecond).Should(Succeed())

		Expect(bed.WriteEndpoints(ctx, wireNamespace, "idle", web1.Endpoint(true))).To(Succeed())
		Eventually(answer(ctx, bed, y), timeout, tick).Should(Equal(web1.Name))
	})

	It("leaves an address dark when its class's L2 node selector matches no node, and the class says why", func(ctx SpecContext) {
		newTidy().own(b.Class("wire-nowhere", ""), b.Claim(wireNamespace, "nowhere"), b.Service(wireNamespace, "nowhere"))
		apply(ctx, testkit.ClassYAML("wire-nowhere", metallbProvisioner, `
  parameters:
    addresses: ["198.51.100.208/29"]
    advertisement: {l2: {nodeSelectors: [{matchLabels: {`+zoneLabel+`: nowhere}}]}}
`)+"---"+testkit.ClaimYAML(wireNamespace, "nowhere", "wire-nowhere"))
		Eventually(kit.StateOfClaim(Default, wireNamespace, "nowhere"), timeout, tick).Should(HaveField("Phase", v1alpha1.ClaimBound))
		z := netip.MustParseAddr(kit.Claim(Default, wireNamespace, "nowhere").Status.Addresses[0].Address)
		Expect(bed.WriteEndpoints(ctx, wireNamespace, "nowhere", web1.Endpoint(true))).To(Succeed())
		apply(ctx, testkit.ClaimingServiceYAML(wireNamespace, "nowhere", "nowhere"))
		Eventually(func() []string { return holders(z.String()) }, timeout, tick).Should(Equal([]string{wireNamespace + "/nowhere"}))
		Consistently(darkness(ctx, bed, z), 2*time.Second, 400*time.Millisecond).Should(Succeed())
		class := &v1alpha1.IPAddressClass{}
		Eventually(func(g Gomega) string {
			g.Expect(kit.Get(ctx, client.ObjectKey{Name: "wire-nowhere"}, class)).To(Succeed())
			c := meta.FindStatusCondition(class.Status.Conditions, v1alpha1.ConditionRendered)
			g.Expect(c).NotTo(BeNil())
			return c.Reason + ": " + c.Message
		}, timeout, tick).Should(And(HavePrefix("NoNodeSelected: "), ContainSubstring(zoneLabel+"=nowhere")))
	})
})

// darkness checks, as a newly arrived client, that nobody answers ARP for
// addr and that no connection to it succeeds.
func darkness(ctx context.Context, bed *wire.Bed, addr netip.Addr) func() error {
	return func() error {
		if err := bed.ForgetNeighbours(); err != nil {
			return err
		}
		nodes, err := bed.WhoHas(addr, arpWindow)
		if err != nil {
			return err
		}
		if len(nodes) > 0 {
			return fmt.Errorf("%s answered ARP for %s", nodes[0].Name, addr)
		}
		if body, err := bed.Get(ctx, addr, 500*time.Millisecond); err == nil {
			return fmt.Errorf("%s answered %q", addr, body)
		}
		return nil
	}
}

// answer is what a newly arrived client gets from addr.
func answer(ctx context.Context, bed *wire.Bed, addr netip.Addr) func() (string, error) {
	return func() (string, error) {
		if err := bed.ForgetNeighbours(); err != nil {
			return "", err
		}
		return bed.Get(ctx, addr, time.Second)
	}
}

// answerer names the nodes that answer ARP for addr.
func answerer(bed *wire.Bed, addr netip.Addr) func() ([]string, error) {
	return func() ([]string, error) {
		nodes, err := bed.WhoHas(addr, arpWindow)
		names := make([]string, 0, len(nodes))
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		return names, err
	}
}

// answeredSteadilyBy reports whether the probes end with an unbroken run of
// answers from backend lasting at least d.
func answeredSteadilyBy(ps []wire.Probe, backend string, d time.Duration) bool {
	if len(ps) == 0 {
		return false
	}
	last := ps[len(ps)-1]
	for _, p := range slices.Backward(ps) {
		if !p.OK() || p.Body != backend {
			return false
		}
		if last.At.Sub(p.At) >= d {
			return true
		}
	}
	return false
}

// failedBetween counts the probes that started at or after from and had
// failed before to.
func failedBetween(probes []wire.Probe, from, to time.Time) int {
	n := 0
	for _, p := range probes {
		if !p.OK() && !p.At.Before(from) && p.At.Add(p.Took).Before(to) {
			n++
		}
	}
	return n
}

// probeRate is the probes per second a series achieved.
func probeRate(ps []wire.Probe) float64 {
	if len(ps) < 2 {
		return 0
	}
	return float64(len(ps)-1) / ps[len(ps)-1].At.Sub(ps[0].At).Seconds()
}

// setL2 replaces the wire class's advertisement with a layer-2 one of
// options l2.
func setL2(ctx context.Context, l2 string) {
	GinkgoHelper()
	out, err := kubectl(ctx, "", "patch", "ipaddressclasses.local.sdn.cozystack.io", "wire", "--type=json",
		"-p", `[{"op": "add", "path": "/spec/parameters/advertisement", "value": {"l2": `+l2+`}}]`)
	Expect(err).NotTo(HaveOccurred(), out)
}

// lastLines is the last n lines of log.
// announcing keeps the lines of a speaker's log about announcing an
// address (its services, ARP and NDP responders, and the layer 2 status),
// which a restart's burst of configuration lines would push out of its tail.
func announcing(log string) string {
	var kept []string
	for line := range strings.SplitSeq(log, "\n") {
		if l := strings.ToLower(line); strings.Contains(l, "announc") || strings.Contains(l, "responder") ||
			strings.Contains(l, "withdraw") || strings.Contains(l, "layer2") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

func lastLines(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
