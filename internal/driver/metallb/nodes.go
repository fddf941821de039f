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

package metallb

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/driver/metallb/params"
	"github.com/cozystack/address-controller/internal/manager"
)

// ReasonNoNodeSelected is the Rendered condition's reason when the class's
// advertisement selects nodes and no Node matches: MetalLB renders the
// class, but no speaker announces its addresses.
const ReasonNoNodeSelected = "NoNodeSelected"

// indexClassSelectingNodes indexes the classes whose advertisement selects
// nodes, under one key, so that a Node's labels changing re-renders only
// those.
const indexClassSelectingNodes = "metallb.classSelectingNodes"

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// nodeMeta is the shape the driver caches Nodes in: metadata only, for
// their labels.
func nodeMeta() *metav1.PartialObjectMetadata {
	n := &metav1.PartialObjectMetadata{}
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	return n
}

// nodeSelectorsOf returns the node selectors of a class's advertisement and
// the path they sit at.
func nodeSelectorsOf(p *params.Parameters) ([]metav1.LabelSelector, string) {
	switch {
	case p.Advertisement == nil:
		return nil, ""
	case p.Advertisement.BGP != nil:
		return p.Advertisement.BGP.NodeSelectors, "parameters.advertisement.bgp.nodeSelectors"
	case p.Advertisement.L2 != nil:
		return p.Advertisement.L2.NodeSelectors, "parameters.advertisement.l2.nodeSelectors"
	}
	return nil, ""
}

// unselected says, for a class whose advertisement selects nodes, that no
// Node matches any of its selectors; "" when one does or none are set.
func (b *Backend) unselected(ctx context.Context, p *params.Parameters) (string, error) {
	selectors, path := nodeSelectorsOf(p)
	if len(selectors) == 0 {
		return "", nil
	}
	for _, s := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(&s)
		if err != nil {
			return "", nil // decoding already refused what does not parse
		}
		nodes := &metav1.PartialObjectMetadataList{}
		nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := b.List(ctx, nodes, client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return "", err
		}
		if len(nodes.Items) > 0 {
			return "", nil
		}
	}
	shown := make([]string, len(selectors))
	for i := range selectors {
		shown[i] = metav1.FormatLabelSelector(&selectors[i])
	}
	return fmt.Sprintf("no Node matches %s (%s): no node announces the class's addresses",
		path, strings.Join(shown, "; ")), nil
}

// nodeWatch re-renders the classes that select nodes when a Node comes,
// goes, or changes its labels.
func (b *Backend) nodeWatch() driver.Watch {
	labelsOnly := predicate.Funcs{
		UpdateFunc:  func(e event.UpdateEvent) bool { return !equalLabels(e.ObjectOld, e.ObjectNew) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return driver.Watch{Object: nodeMeta(), Predicates: []predicate.Predicate{labelsOnly},
		Handler: handler.EnqueueRequestsFromMapFunc(b.classesSelectingNodes)}
}

func equalLabels(a, b client.Object) bool {
	la, lb := a.GetLabels(), b.GetLabels()
	if len(la) != len(lb) {
		return false
	}
	for k, v := range la {
		if w, ok := lb[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (b *Backend) classesSelectingNodes(ctx context.Context, _ client.Object) []reconcile.Request {
	return manager.RequestsByIndex(ctx, b, &v1alpha1.IPAddressClassList{}, indexClassSelectingNodes, "true")
}

// indexSelectingNodes is the extractor of indexClassSelectingNodes.
func (b *Backend) indexSelectingNodes(o client.Object) []string {
	c := o.(*v1alpha1.IPAddressClass)
	if c.Spec.Provisioner != b.Provisioner() {
		return nil
	}
	p, err := params.Decode(c.Spec.Parameters)
	if err != nil {
		return nil
	}
	if s, _ := nodeSelectorsOf(p); len(s) > 0 {
		return []string{"true"}
	}
	return nil
}
