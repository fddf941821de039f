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
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the MetalLB driver.
type Options struct {
	// PlaceholderNamespace holds the placeholder Services that keep reserved
	// addresses in MetalLB's books.
	PlaceholderNamespace string
	// MetalLBNamespace is where MetalLB reads its IPAddressPools and
	// advertisements.
	MetalLBNamespace string
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.PlaceholderNamespace, "placeholder-namespace", "metallb-iad-system",
		"Namespace of the placeholder Services; tenants must not be able to write to it.")
	fs.StringVar(&o.MetalLBNamespace, "metallb-namespace", "metallb-system",
		"Namespace where MetalLB reads its configuration.")
}

// Setup registers the driver's field indexes and controllers on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
