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
	"flag"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/driver"
)

// Options configure the Cilium driver.
type Options struct {
	// PlaceholderNamespace holds the placeholder Services that keep reserved
	// addresses in LB-IPAM's books. Tenants must not be able to write to it.
	PlaceholderNamespace string
	// Driver tunes the backend-agnostic controllers.
	Driver driver.Options
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.PlaceholderNamespace, "placeholder-namespace", "cilium-iad-system",
		"Namespace of the placeholder Services; tenants must not be able to write to it.")
	o.Driver.BindFlags(fs)
}

// ManagerOptions scopes the manager's cache to what the driver reads: the
// pools it renders, and Services trimmed by the framework.
func (o *Options) ManagerOptions(opts *ctrl.Options) {
	o.Driver.ManagerOptions(opts)
	opts.Cache.ByObject[newPool()] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: ManagedByValue})}
}

// PoolGVK is the kind of the pools the driver renders: cluster-scoped,
// served by the operator's LB-IPAM.
var PoolGVK = schema.GroupVersionKind{Group: "cilium.io", Version: "v2", Kind: "CiliumLoadBalancerIPPool"}

func newPool() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(PoolGVK)
	return u
}
