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

// Package charts tests the Helm charts under charts/ against the local
// control plane of test/cluster: every chart lints with default values and
// with every option switched on, its files and renderings are strict YAML
// (no key twice) and every value is documented and in the schema, every
// object they render is accepted by a real API server, their roles are the
// ones the markers generate and no wider, and their admission policies admit
// and deny exactly the writes docs/install.md and each chart's README
// describe, for real users and ServiceAccounts. An upgrade from an earlier
// commit's core chart, whose CRDs sat in crds/, runs on a control plane of
// its own over live objects.
//
// The tests run the helm binary that `make helm` builds into bin/.
package charts
