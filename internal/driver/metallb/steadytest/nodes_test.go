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

package steadytest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
	b "github.com/cozystack/address-controller/test/builder"
	"github.com/cozystack/address-controller/test/testkit"
)

// A class whose advertisement selects no Node renders, but nothing would
// announce it: its Rendered condition says so, with a Warning event, and
// follows Nodes as they come, relabel and go.
func TestClassSelectingNoNodeSaysSo(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := context.Background()
	name := testkit.Name(t)
	zone := "zone-" + name
	v4, _ := mt.FreshRange()
	c := b.Class(name, mt.Provisioner, b.Parameters(`{"addresses": ["`+v4+`"],
		"advertisement": {"l2": {"nodeSelectors": [{"matchLabels": {"wire.test/zone": "`+zone+`"}}]}}}`))
	mt.Kit.Make(t, g, c)
	g.Eventually(mt.Rendered("L2Advertisement", name), mt.Timeout, mt.Tick).ShouldNot(BeNil())
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(And(
		HavePrefix("True NoNodeSelected: Rendered, but no Node matches parameters.advertisement.l2.nodeSelectors"),
		ContainSubstring("wire.test/zone="+zone)))
	g.Eventually(mt.Kit.EventsAbout(g, c, "NoNodeSelected"), mt.Timeout, mt.Tick).ShouldNot(BeEmpty())

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"wire.test/zone": "elsewhere"}}}
	g.Expect(mt.Client.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = mt.Client.Delete(context.Background(), node) })
	g.Consistently(mt.ClassCondition(g, name), "2s", mt.Tick).Should(HavePrefix("True NoNodeSelected"))

	relabel := func(labels map[string]string) {
		g.Expect(mt.Client.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
		node.Labels = labels
		g.Expect(mt.Client.Update(ctx, node)).To(Succeed())
	}
	relabel(map[string]string{"wire.test/zone": zone})
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True Rendered"))
	relabel(map[string]string{"wire.test/zone": "elsewhere"})
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True NoNodeSelected"))
	relabel(map[string]string{"wire.test/zone": zone})
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True Rendered"))
	g.Expect(mt.Client.Delete(ctx, node)).To(Succeed())
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True NoNodeSelected"))

	// Without selectors every node may announce: nothing to say.
	mt.SetParameters(g, name, `{"addresses": ["`+v4+`"]}`)
	g.Eventually(mt.ClassCondition(g, name), mt.Timeout, mt.Tick).Should(HavePrefix("True Rendered"))
}
