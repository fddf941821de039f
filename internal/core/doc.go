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

// Package core is the binder of address-controller: it resolves classes,
// accepts pre-bindings, matches claims to Available addresses, derives phases
// and conditions, reclaims addresses when claims go, and returns Released
// addresses after a class's releaseDelay.
//
// It never allocates an address, never reads class parameters, and never
// touches a Service or any backend object: that is a driver's work. It must
// not import internal/driver.
package core
