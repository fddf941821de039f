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

// Package controllers is the backend-agnostic half of an address driver:
// it serves the claims the core stamps with the driver's provisioner,
// records what the backend reserves as pre-bound IPAddress objects, keeps
// every address held by the backend while no workload carries it,
// associates addresses with the Services that name their claim (by a shared
// or a gap handoff), detects Services that hold an address they are not
// entitled to, renders and counts classes, and tears backend state down
// before an address it created goes. Setup registers its four controllers
// (claims, addresses, Services, classes) for a backend.
//
// It reaches the backend only through the seam in internal/driver; it must
// not import a backend, nor internal/core: it talks to the core only
// through the API objects.
package controllers
