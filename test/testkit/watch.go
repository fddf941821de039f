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

package testkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// IPWatcher follows every Service of the cluster through a watch and
// records, for a set of IPs, every window in which no Service's load
// balancer reported one of them, once some Service had.
type IPWatcher struct {
	mu         sync.Mutex
	reporters  map[string]map[string]bool // ip -> Services reporting it
	seen       map[string]bool
	emptySince map[string]time.Time
	gaps       map[string][]time.Duration
	events     int
	// took counts, per Service, how often it began reporting a watched IP.
	took map[string]int
}

// WatchIPs watches every Service of the cluster cfg reaches for the IPs
// given until the test ends.
func WatchIPs(t *testing.T, g Gomega, cfg *rest.Config, ips ...string) *IPWatcher {
	wc, err := client.NewWithWatch(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &corev1.ServiceList{})
	g.Expect(err).NotTo(HaveOccurred())
	iw := &IPWatcher{reporters: map[string]map[string]bool{}, seen: map[string]bool{},
		emptySince: map[string]time.Time{}, gaps: map[string][]time.Duration{}, took: map[string]int{}}
	for _, ip := range ips {
		iw.reporters[ip] = map[string]bool{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			svc, ok := ev.Object.(*corev1.Service)
			if !ok {
				continue
			}
			iw.observe(ev.Type, svc, time.Now())
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return iw
}

func (w *IPWatcher) observe(typ watch.EventType, svc *corev1.Service, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if os.Getenv("WATCH_DEBUG") != "" {
		fmt.Println(now.Format("15:04:05.000"), typ, svc.Namespace+"/"+svc.Name, ingressIPsOf(svc), svc.Annotations, svc.Labels, svc.DeletionTimestamp != nil)
	}
	key := svc.Namespace + "/" + svc.Name
	have := ingressIPsOf(svc)
	for ip, reps := range w.reporters {
		if typ != watch.Deleted && slices.Contains(have, ip) {
			if !reps[key] {
				w.took[key]++
			}
			reps[key] = true
		} else {
			delete(reps, key)
		}
		switch {
		case len(reps) > 0:
			w.seen[ip] = true
			if since, ok := w.emptySince[ip]; ok {
				w.gaps[ip] = append(w.gaps[ip], now.Sub(since))
				delete(w.emptySince, ip)
			}
		case w.seen[ip]:
			if _, ok := w.emptySince[ip]; !ok {
				w.emptySince[ip] = now
			}
		}
	}
}

// Events counts the watch events seen.
func (w *IPWatcher) Events() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events
}

// Took says how often the Service ns/name began reporting a watched IP.
func (w *IPWatcher) Took(ns, name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.took[ns+"/"+name]
}

// Gaps returns, per IP, the windows in which nobody reported it, an open one
// included.
func (w *IPWatcher) Gaps() map[string][]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]time.Duration{}
	for ip, gaps := range w.gaps {
		out[ip] = slices.Clone(gaps)
	}
	for ip, since := range w.emptySince {
		out[ip] = append(out[ip], time.Since(since))
	}
	return out
}

func ingressIPsOf(svc *corev1.Service) []string {
	out := make([]string, 0, len(svc.Status.LoadBalancer.Ingress))
	for _, in := range svc.Status.LoadBalancer.Ingress {
		out = append(out, in.IP)
	}
	return out
}
