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

package cilium

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/classparams"
	"github.com/cozystack/address-controller/internal/driver/placeholder"
	"github.com/cozystack/address-controller/internal/ipaddr"
	"github.com/cozystack/address-controller/internal/manager"
)

// Reasons of a class's conditions.
const (
	ReasonInvalidParameters = "InvalidParameters"
	ReasonPoolConflict      = "PoolConflict"
)

// parameters are a Cilium class's spec.parameters.
type parameters struct {
	// Addresses are the class's ranges: CIDRs ("203.0.113.0/28") or
	// inclusive ranges ("203.0.113.10-203.0.113.20"), either family. They
	// may overlap: the pool holds their union.
	Addresses []string `json:"addresses"`
}

// DecodeParameters reads a Cilium class's spec.parameters strictly and
// returns its ranges, merged. An unknown field, a value of the wrong type, a
// range that does not parse or none at all is a *classparams.Error holding
// every problem, worded as the chart's admission policy words them.
func DecodeParameters(raw *runtime.RawExtension) ([]ipaddr.Range, error) {
	var p parameters
	problems, typed := classparams.Decode(raw, &p)
	var ranges []ipaddr.Range
	if typed {
		var more []string
		ranges, more = classparams.Addresses(p.Addresses)
		problems = append(problems, more...)
	}
	if len(problems) > 0 {
		return nil, &classparams.Error{Problems: problems}
	}
	return ipaddr.Merge(ranges), nil
}

// decode reads a class's ranges (DecodeParameters).
func decode(class *v1alpha1.IPAddressClass) ([]ipaddr.Range, error) {
	return DecodeParameters(class.Spec.Parameters)
}

// poolName is the name of a class's pool.
func poolName(class string) string { return poolPrefix + class }

// RenderClass applies one CiliumLoadBalancerIPPool for the class, owned by
// it, over the class's ranges and every kept address outside them, selecting
// only the Services the driver labels for the class. Parameters that do not
// decode render nothing and leave the previous pool in place. A pool LB-IPAM
// finds in conflict with another serves nothing: the class says so.
func (b *Backend) RenderClass(ctx context.Context, class *v1alpha1.IPAddressClass, keep []netip.Addr) (driver.RenderResult, error) {
	ranges, err := decode(class)
	if err != nil {
		return driver.RenderResult{Problem: err.Error(), Reason: ReasonInvalidParameters}, nil
	}
	res := driver.RenderResult{Families: driver.FamiliesOf(ranges), Ranges: ranges}
	blocks := ranges
	for _, ip := range keep {
		if !slices.ContainsFunc(ranges, func(r ipaddr.Range) bool { return r.Contains(ip) }) {
			res.Outside = append(res.Outside, ip)
			blocks = append(blocks, ipaddr.SingleAddress(ip))
		}
	}
	// LB-IPAM hands out a CIDR's first and last addresses too: the pool
	// leaves allowFirstLastIPs at its default.
	res.Capacity = driver.CountRanges(ranges, ipaddr.Range.Size)
	pool := rendering(class, ipaddr.Merge(blocks))
	if err := manager.ApplyIfChanged(ctx, b, pool, fieldOwner); err != nil {
		return driver.RenderResult{}, err
	}
	cur := newPool()
	if err := b.Get(ctx, client.ObjectKeyFromObject(pool), cur); err == nil {
		if msg := conflictOf(cur); msg != "" {
			res.Unusable, res.UnusableReason = msg, ReasonPoolConflict
		}
	}
	return res, nil
}

// rendering is the pool of class over blocks.
func rendering(class *v1alpha1.IPAddressClass, blocks []ipaddr.Range) *unstructured.Unstructured {
	pool := newPool()
	pool.SetName(poolName(class.Name))
	pool.SetLabels(map[string]string{v1alpha1.LabelManagedBy: ManagedByValue, v1alpha1.LabelClass: placeholder.LabelValue(class.Name)})
	pool.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "IPAddressClass",
		Name: class.Name, UID: class.UID, Controller: new(true), BlockOwnerDeletion: new(true)}})
	list := make([]any, 0, len(blocks))
	for _, r := range blocks {
		if s := r.String(); !strings.Contains(s, "-") {
			list = append(list, map[string]any{"cidr": s})
		} else {
			list = append(list, map[string]any{"start": r.First.String(), "stop": r.Last.String()})
		}
	}
	pool.Object["spec"] = map[string]any{
		"blocks": list,
		"serviceSelector": map[string]any{"matchLabels": map[string]any{
			v1alpha1.LabelCiliumPool: placeholder.LabelValue(class.Name)}},
	}
	return pool
}

// conflictOf is LB-IPAM's message on a pool it found in conflict, or "".
func conflictOf(pool *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(pool.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == conditionPoolConflict && m["status"] == string(metav1.ConditionTrue) {
			msg, _ := m["message"].(string)
			return fmt.Sprintf("Cilium's LB-IPAM reports CiliumLoadBalancerIPPool %s in conflict: %s", pool.GetName(), msg)
		}
	}
	return ""
}

// poolCovers says whether the class's rendered pool contains ip; known is
// false while the pool is not rendered.
func (b *Backend) poolCovers(ctx context.Context, class string, ip netip.Addr) (covered, known bool) {
	pool := newPool()
	if err := b.Get(ctx, client.ObjectKey{Name: poolName(class)}, pool); err != nil {
		return false, false
	}
	blocks, _, _ := unstructured.NestedSlice(pool.Object, "spec", "blocks")
	for _, raw := range blocks {
		m, _ := raw.(map[string]any)
		text, _ := m["cidr"].(string)
		if text == "" {
			start, _ := m["start"].(string)
			stop, _ := m["stop"].(string)
			text = start + "-" + stop
		}
		if r, err := ipaddr.ParseRangeLenient(text); err == nil && r.Contains(ip) {
			return true, true
		}
	}
	return false, true
}
