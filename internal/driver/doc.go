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

// Package driver is the seam between the driver framework and a backend:
// the Backend interface a backend implements (six methods), the optional
// capabilities the framework discovers by type assertion, the types they
// exchange, the reasons of the conditions the driver writes, and what every
// backend shares: the options and flags of a driver's binary, the Gate's
// parking, the counting of ranges and the reading of an address's binding.
// All of it is in seam.go but for those shared helpers.
//
// The framework's controllers, which do everything that does not depend on
// the backend, are in internal/driver/controllers; a backend registers
// them with controllers.Setup. The backends are internal/driver/metallb and
// internal/driver/cilium; internal/driver/drivertest is the contract they
// pass. This package imports no backend and not internal/core: the driver
// talks to the core only through the API objects.
package driver
