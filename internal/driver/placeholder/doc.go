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

// Package placeholder is the reservation machinery of Service-based backends:
// a backend whose allocator hands addresses to LoadBalancer Services keeps an
// address reserved with a selectorless placeholder Service (a hold), and asks
// for a new address with an allocation placeholder that its pool selects. The
// package knows the placeholders' names, labels and indexes, builds them,
// lists and deletes them, finds the ones nothing needs any more (Orphans),
// and maps their changes to the claims, addresses and Services they concern.
// What a placeholder carries to steer the allocator (the pin, the sharing
// key, the pool) is the backend's.
//
// It is part of the framework: it imports no backend.
package placeholder
