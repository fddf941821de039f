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
	"context"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kill kinds, as the report counts them.
const (
	killCoreLeader     = "core leader"
	killCoreFollower   = "core follower"
	killDriverLeader   = "driver leader"
	killDriverFollower = "driver follower"
	killMetalLB        = "metallb controller"
	killCilium         = "cilium operator"
)

// killer SIGKILLs one process every few seconds and restarts it a second
// later. A process whose restart is pending is never picked.
type killer struct {
	e   *env
	rng *rand.Rand

	mu         sync.Mutex
	down       map[string]bool // replica name or the allocator's (backend.name)
	kills      map[string]int
	lastKill   time.Time
	restartErr []string
	restarts   sync.WaitGroup
	// identities maps a Lease holderIdentity to the replica that held it.
	identities map[string]string
	// allocator hears of every kill of the allocator, for the invariants'
	// clocks.
	allocator *allocatorKills
	// began is when the kills began; allocatorAt, how long after it each
	// kill of the allocator came (replayed on MetalLB alone, see alone.go).
	began       time.Time
	allocatorAt []time.Duration
}

func newKiller(e *env, seed int64, mk *allocatorKills) *killer {
	return &killer{e: e, rng: rand.New(rand.NewPCG(uint64(seed), 0x6b696c6c)),
		down: map[string]bool{}, kills: map[string]int{}, identities: map[string]string{}, allocator: mk}
}

// run kills until d has passed, then waits for the last restarts.
func (k *killer) run(ctx context.Context, d time.Duration) {
	k.began = time.Now()
	end := k.began.Add(d)
	for {
		pause := k.e.cfg.KillMin + time.Duration(k.rng.Int64N(int64(k.e.cfg.KillMax-k.e.cfg.KillMin)+1))
		if time.Now().Add(pause).After(end) {
			break
		}
		select {
		case <-ctx.Done():
			k.restarts.Wait()
			return
		case <-time.After(pause):
		}
		k.killOne(ctx, time.Until(end) < d/2)
	}
	k.restarts.Wait()
}

// killOne picks the allocator (the MetalLB controller or the Cilium
// operator), the core or the driver at random (the core weighed by
// Config.CoreKills) and, for a manager, its leader or a follower at random.
// In the second half of the window (late) a party not killed yet goes
// first, so that a short run kills each of the three at least once.
func (k *killer) killOne(ctx context.Context, late bool) {
	core := max(k.e.cfg.CoreKills, 1)
	target := k.rng.IntN(2 + core)
	if spared, ok := k.spared(); late && ok {
		target = spared
	}
	switch target {
	case 0:
		k.killAllocator()
	case 1:
		k.killManager(ctx, kindDriver, k.e.b.lease, killDriverLeader, killDriverFollower)
	default:
		k.killManager(ctx, kindCore, coreLease, killCoreLeader, killCoreFollower)
	}
}

// spared is the first target of killOne (0 the allocator, 1 the driver, 2
// the core) never killed so far.
func (k *killer) spared() (int, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, n := range []int{
		k.kills[k.e.b.allocatorKill],
		k.kills[killDriverLeader] + k.kills[killDriverFollower],
		k.kills[killCoreLeader] + k.kills[killCoreFollower],
	} {
		if n == 0 {
			return i, true
		}
	}
	return 0, false
}

// killAllocator kills MetalLB or the Cilium operator, whichever the driver
// under chaos drives, and restarts it a moment later.
func (k *killer) killAllocator() {
	kill, start := k.e.cluster.KillMetalLB, k.e.cluster.StartMetalLB
	if k.e.cfg.Cilium {
		kill, start = k.e.cluster.KillCilium, k.e.cluster.StartCilium
	}
	name := k.e.b.name
	if !k.markDown(name) {
		return
	}
	now := time.Now()
	k.allocator.killed(now)
	k.mu.Lock()
	k.allocatorAt = append(k.allocatorAt, now.Sub(k.began))
	k.mu.Unlock()
	if err := kill(); err != nil {
		k.failed("killing " + name + ": " + err.Error())
	}
	k.count(k.e.b.allocatorKill, name)
	k.restartLater(name, start)
}

func (k *killer) killManager(ctx context.Context, kind, lease, asLeader, asFollower string) {
	rs := k.e.managers[kind]
	leader := k.leader(ctx, kind, lease)
	wantLeader := k.rng.IntN(2) == 0
	var target *replica
	for _, r := range rs {
		if (r.name == leader) == wantLeader {
			target = r
		}
	}
	if target == nil { // no replica leads now (a lease waiting to expire)
		target = rs[k.rng.IntN(len(rs))]
	}
	if !k.markDown(target.name) {
		return
	}
	if err := target.process().Kill(); err != nil {
		k.failed("killing " + target.name + ": " + err.Error())
	}
	role := asFollower
	if target.name == leader {
		role = asLeader
	}
	k.count(role, target.name)
	k.forget(target.name)
	k.restartLater(target.name, func() error { return target.start(k.e.cluster) })
}

// replay kills the allocator at each of at after now, as killAllocator
// does, then waits for the last restart.
func (k *killer) replay(ctx context.Context, at []time.Duration) {
	k.began = time.Now()
	for _, d := range at {
		select {
		case <-ctx.Done():
			k.restarts.Wait()
			return
		case <-time.After(time.Until(k.began.Add(d))):
		}
		k.killAllocator()
	}
	k.restarts.Wait()
}

// allocatorKillTimes is how long after the kills began each kill of the
// allocator came.
func (k *killer) allocatorKillTimes() []time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]time.Duration(nil), k.allocatorAt...)
}

// forget drops the identities a killed replica held: a lease it held stays
// in its name until it expires, but nobody leads meanwhile.
func (k *killer) forget(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	maps.DeleteFunc(k.identities, func(_, n string) bool { return n == name })
}

// markDown claims a process for a kill; false if it is already down.
func (k *killer) markDown(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down[name] {
		return false
	}
	k.down[name] = true
	return true
}

func (k *killer) count(kind, name string) {
	k.mu.Lock()
	k.kills[kind]++
	k.lastKill = time.Now()
	k.mu.Unlock()
	k.e.cfg.logf("Killed %s (%s)", name, kind)
}

func (k *killer) failed(msg string) {
	k.mu.Lock()
	k.restartErr = append(k.restartErr, msg)
	k.mu.Unlock()
	k.e.cfg.logf("%s", msg)
}

func (k *killer) restartLater(name string, start func() error) {
	k.restarts.Go(func() {
		time.Sleep(k.e.cfg.RestartAfter)
		if err := start(); err != nil {
			k.failed("restarting " + name + ": " + err.Error())
		}
		k.mu.Lock()
		delete(k.down, name)
		k.mu.Unlock()
	})
}

// leader names the replica of kind that holds the lease now, or "" if none
// does. The Lease's holderIdentity (hostname_uuid) does not say which
// process it is, so the first time an identity is seen, the replica whose
// leader_election_master_status is 1 is taken to be it.
func (k *killer) leader(ctx context.Context, kind, lease string) string {
	l, err := k.e.cs.CoordinationV1().Leases(systemNamespace).Get(ctx, lease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return ""
	}
	id := *l.Spec.HolderIdentity
	if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil &&
		time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
		return "" // expired: nobody leads until a replica takes it
	}
	k.mu.Lock()
	name, known := k.identities[id]
	k.mu.Unlock()
	if known {
		return name
	}
	var leaders []string
	for _, r := range k.e.managers[kind] {
		if leadsAndReady(ctx, r.metricsURL, lease, false) {
			leaders = append(leaders, r.name)
		}
	}
	if len(leaders) != 1 {
		return ""
	}
	k.mu.Lock()
	k.identities[id] = leaders[0]
	k.mu.Unlock()
	return leaders[0]
}

// summary returns the kills by kind, the time of the last one, and any
// failure to kill or restart.
func (k *killer) summary() (map[string]int, time.Time, []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps.Clone(k.kills), k.lastKill, append([]string(nil), k.restartErr...)
}
