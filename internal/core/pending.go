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

package core

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
)

// pendingBinds remembers the bindings this process wrote until the informer
// has shown them. Without it, a claim reconciled again before its new
// address's update reaches the cache would see the family still missing and
// bind a second address; and another claim would pick the same address from
// the stale available set and waste a round trip on a conflict.
type pendingBinds struct {
	mu        sync.Mutex
	ttl       time.Duration
	now       func() time.Time
	byClaim   map[types.UID]map[v1alpha1.IPFamily]pendingBind
	byAddress map[string]types.UID
}

type pendingBind struct {
	// address is the object as the API server returned it after binding.
	address *v1alpha1.IPAddress
	at      time.Time
}

func newPendingBinds(now func() time.Time) *pendingBinds {
	return &pendingBinds{
		ttl:       2 * time.Minute,
		now:       now,
		byClaim:   map[types.UID]map[v1alpha1.IPFamily]pendingBind{},
		byAddress: map[string]types.UID{},
	}
}

// record notes that claim now holds the bound address a.
func (p *pendingBinds) record(claim types.UID, a *v1alpha1.IPAddress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byClaim[claim] == nil {
		p.byClaim[claim] = map[v1alpha1.IPFamily]pendingBind{}
	}
	p.byClaim[claim][a.Family()] = pendingBind{address: a.DeepCopy(), at: p.now()}
	p.byAddress[a.Name] = claim
}

// forClaim returns the bindings of claim the cache may not show yet.
func (p *pendingBinds) forClaim(claim types.UID) []*v1alpha1.IPAddress {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*v1alpha1.IPAddress
	for family, b := range p.byClaim[claim] {
		if p.now().Sub(b.at) > p.ttl {
			p.forgetLocked(claim, family)
			continue
		}
		out = append(out, b.address)
	}
	return out
}

// isPending reports whether an address was just bound by this process.
func (p *pendingBinds) isPending(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.byAddress[name]
	return ok
}

// observe forgets a binding once the informer delivers the written version
// of the address, or any later one, or its deletion.
func (p *pendingBinds) observe(a *v1alpha1.IPAddress, deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	claim, ok := p.byAddress[a.Name]
	if !ok {
		return
	}
	b, ok := p.byClaim[claim][a.Family()]
	if !ok || b.address.Name != a.Name {
		delete(p.byAddress, a.Name)
		return
	}
	if deleted || !olderVersion(a.ResourceVersion, b.address.ResourceVersion) {
		p.forgetLocked(claim, a.Family())
	}
}

// forgetClaim drops everything recorded for a claim that is gone.
func (p *pendingBinds) forgetClaim(claim types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for family := range p.byClaim[claim] {
		p.forgetLocked(claim, family)
	}
}

func (p *pendingBinds) forgetLocked(claim types.UID, family v1alpha1.IPFamily) {
	if b, ok := p.byClaim[claim][family]; ok {
		delete(p.byAddress, b.address.Name)
		delete(p.byClaim[claim], family)
	}
	if len(p.byClaim[claim]) == 0 {
		delete(p.byClaim, claim)
	}
}

// olderVersion reports whether resource version a is older than b. Resource
// versions are opaque by contract but are etcd revisions in practice; when
// either does not parse, only equality counts as caught up.
func olderVersion(a, b string) bool {
	ai, errA := strconv.ParseUint(a, 10, 64)
	bi, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a != b
	}
	return ai < bi
}
