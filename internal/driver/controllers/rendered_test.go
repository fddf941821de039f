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
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/ipaddr"
)

// TestRenderedRangesAnswerOnlyForTheRenderedClass: an address event is
// batched as a count change only when the class's last rendering, at the
// class's current UID and generation, covers the address; any doubt wakes
// the class at once.
func TestRenderedRangesAnswerOnlyForTheRenderedClass(t *testing.T) {
	class := func(uid string, generation int64) *v1alpha1.IPAddressClass {
		return &v1alpha1.IPAddressClass{ObjectMeta: metav1.ObjectMeta{Name: "public", UID: k8stypes.UID(uid), Generation: generation}}
	}
	r, err := ipaddr.ParseRange("198.51.100.0/28")
	if err != nil {
		t.Fatal(err)
	}
	inside, outside := netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("198.51.100.99")
	rendered := driver.RenderResult{Ranges: []ipaddr.Range{r}}
	cases := []struct {
		name   string
		record func(*renderedRanges)
		asked  *v1alpha1.IPAddressClass
		ip     netip.Addr
		want   bool
	}{
		{"never rendered", func(*renderedRanges) {}, class("a", 1), inside, false},
		{"inside the rendered ranges", func(rr *renderedRanges) { rr.record(class("a", 1), rendered) }, class("a", 1), inside, true},
		{"outside them", func(rr *renderedRanges) { rr.record(class("a", 1), rendered) }, class("a", 1), outside, false},
		{"the class changed since", func(rr *renderedRanges) { rr.record(class("a", 1), rendered) }, class("a", 2), inside, false},
		{"another class of the same name", func(rr *renderedRanges) { rr.record(class("a", 1), rendered) }, class("b", 1), inside, false},
		{"its parameters stopped rendering", func(rr *renderedRanges) {
			rr.record(class("a", 1), rendered)
			rr.record(class("a", 1), driver.RenderResult{Problem: "bad"})
		}, class("a", 1), inside, false},
		{"it went", func(rr *renderedRanges) {
			rr.record(class("a", 1), rendered)
			rr.forget("public")
		}, class("a", 1), inside, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rr renderedRanges
			c.record(&rr)
			if got := rr.covers(c.asked, c.ip); got != c.want {
				t.Errorf("covers(%s) = %v, want %v", c.ip, got, c.want)
			}
		})
	}
}
