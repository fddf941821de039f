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

package controllers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// ingressLog follows, from the Service informer, which addresses the
// Services' load balancers report, and measures how long a ledger address
// goes unreported: the time the backend counted it free.
//
// It also counts, per address, how often a Service stopped reporting it.
// That count is part of the retry token (see retryToken): a pinned Service
// the backend refused is asked again exactly when something that held its
// address let go of it, and never twice for the same state.
type ingressLog struct {
	clock clock.PassiveClock
	boot  string
	// observe receives, for a ledger address reported again, how long it
	// was unreported.
	observe func(seconds float64)
	// inLedger says whether an IPAddress records ip.
	inLedger func(ip string) bool

	mu        sync.Mutex
	reporters map[string]int
	freed     map[string]uint64
	freeSince map[string]time.Time
}

func newIngressLog(clk clock.PassiveClock, observe func(float64), inLedger func(string) bool) *ingressLog {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &ingressLog{clock: clk, boot: hex.EncodeToString(b[:]), observe: observe, inLedger: inLedger,
		reporters: map[string]int{}, freed: map[string]uint64{}, freeSince: map[string]time.Time{}}
}

// follow registers the log on the Service and IPAddress informers.
func (l *ingressLog) follow(ctx context.Context, mgr ctrl.Manager) error {
	if err := manager.Observe(ctx, mgr, manager.Events[*corev1.Service]{
		Add: func(s *corev1.Service) { l.change(nil, ingressIPs(s)) },
		Update: func(o, n *corev1.Service) {
			if before, after := ingressIPs(o), ingressIPs(n); !slices.Equal(before, after) {
				l.change(before, after)
			}
		},
		Delete: func(s *corev1.Service) { l.change(ingressIPs(s), nil) },
	}); err != nil {
		return err
	}
	return manager.Observe(ctx, mgr, manager.Events[*v1alpha1.IPAddress]{
		Delete: func(a *v1alpha1.IPAddress) { l.forget(a.Spec.Address) },
	})
}

// change records that a Service stopped reporting before and started
// reporting after (IPs in both are untouched).
func (l *ingressLog) change(before, after []string) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ip := range before {
		if slices.Contains(after, ip) {
			continue
		}
		l.freed[ip]++
		if l.reporters[ip]--; l.reporters[ip] <= 0 {
			delete(l.reporters, ip)
			l.freeSince[ip] = now
		}
	}
	for _, ip := range after {
		if slices.Contains(before, ip) {
			continue
		}
		if since, ok := l.freeSince[ip]; ok && l.reporters[ip] == 0 {
			delete(l.freeSince, ip)
			if l.inLedger(ip) {
				l.observe(now.Sub(since).Seconds())
			}
		}
		l.reporters[ip]++
	}
}

// forget drops what the log knows of an address that left the ledger: its
// next use starts a new story.
func (l *ingressLog) forget(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.freeSince, ip)
	delete(l.freed, ip)
}

// retryToken names the state in which a pinned Service waits for ip: this
// process, how often a Service let go of ip, and the Services reporting ip
// now, with their versions. A Service is asked again only when the token it
// carries is not the current one; asking writes the token, so one state
// yields one request.
func (l *ingressLog) retryToken(ip string, reporters []*corev1.Service) string {
	l.mu.Lock()
	freed := l.freed[ip]
	l.mu.Unlock()
	keys := make([]string, 0, len(reporters))
	for _, s := range reporters {
		keys = append(keys, string(s.UID)+"@"+s.ResourceVersion)
	}
	slices.Sort(keys)
	sum := sha256.Sum256([]byte(fmt.Sprint(keys)))
	return fmt.Sprintf("%s-%d-%s", l.boot, freed, hex.EncodeToString(sum[:])[:12])
}
