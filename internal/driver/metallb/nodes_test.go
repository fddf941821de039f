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

package metallb_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// A class whose advertisement selects no Node renders, but nothing would
// announce it: its Rendered condition says so, with a Warning event, and
// follows Nodes as they come, relabel and go.
func TestClassSelectingNoNodeSaysSo(t *testing.T) {
	startDriver(t)
	g := NewWithT(t)
	ctx := context.Background()
	name := testkit.Name(t)
	zone := "zone-" + name
	v4, _ := freshRange()
	c := b.Class(name, provisioner, b.Parameters(`{"addresses": ["`+v4+`"],
		"advertisement": {"l2": {"nodeSelectors": [{"matchLabels": {"wire.test/zone": "`+zone+`"}}]}}}`))
	kit.Create(g, c)
	g.Eventually(rendered(g, "L2Advertisement", name), timeout, tick).ShouldNot(BeNil())
	g.Eventually(classCondition(g, name), timeout, tick).Should(And(
		HavePrefix("True NoNodeSelected: Rendered, but no Node matches parameters.advertisement.l2.nodeSelectors"),
		ContainSubstring("wire.test/zone="+zone)))
	g.Eventually(kit.EventsAbout(g, c, "NoNodeSelected"), timeout, tick).ShouldNot(BeEmpty())

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"wire.test/zone": "elsewhere"}}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	g.Consistently(classCondition(g, name), "2s", tick).Should(HavePrefix("True NoNodeSelected"))

	relabel := func(labels map[string]string) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
		node.Labels = labels
		g.Expect(k8s.Update(ctx, node)).To(Succeed())
	}
	relabel(map[string]string{"wire.test/zone": zone})
	g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True Rendered"))
	relabel(map[string]string{"wire.test/zone": "elsewhere"})
	g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True NoNodeSelected"))
	relabel(map[string]string{"wire.test/zone": zone})
	g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True Rendered"))
	g.Expect(k8s.Delete(ctx, node)).To(Succeed())
	g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True NoNodeSelected"))

	// Without selectors every node may announce: nothing to say.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	c.Spec.Parameters = b.Class("", "", b.Parameters(`{"addresses": ["`+v4+`"]}`)).Spec.Parameters
	g.Expect(k8s.Update(ctx, c)).To(Succeed())
	g.Eventually(classCondition(g, name), timeout, tick).Should(HavePrefix("True Rendered"))
}
