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
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options tune the core's controllers.
type Options struct {
	// ClaimConcurrency, AddressConcurrency and ClassConcurrency bound how
	// many objects of each kind are reconciled at once.
	ClaimConcurrency   int
	AddressConcurrency int
	ClassConcurrency   int
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.ClaimConcurrency, "claim-concurrency", 4, "How many IPAddressClaims are reconciled at once.")
	fs.IntVar(&o.AddressConcurrency, "address-concurrency", 4, "How many IPAddresses are reconciled at once.")
	fs.IntVar(&o.ClassConcurrency, "class-concurrency", 1, "How many IPAddressClasses are reconciled at once.")
}

// Setup registers the core's field indexes and controllers on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
