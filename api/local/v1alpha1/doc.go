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

// Package v1alpha1 is the API both managers share, group
// local.sdn.cozystack.io, version v1alpha1: the IPAddressClass, IPAddress and
// IPAddressClaim kinds, their validation markers (enforced at admission by the
// CRD schemas and CEL), and every well-known name — annotations, labels,
// finalizers, condition types and reasons, event reasons — as documented
// constants.
//
// It holds types and pure helpers only: no client, no reconcile logic, and no
// import of any package of this repository.
package v1alpha1
