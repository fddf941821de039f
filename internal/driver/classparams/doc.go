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

// Package classparams is what every driver shares in reading a class's
// spec.parameters: the strict JSON decoding that turns unknown fields and
// wrong types into problems with a path, the list of address ranges every
// driver's parameters carry, and the wording of those problems.
//
// The drivers' admission policies (charts/<driver>/templates/
// class_parameters_policy.yaml) refuse the same problems at apply time, in
// CEL, with the same messages; test/charts applies each bad input through a
// real API server and compares the policy's refusal with what this package
// and the driver report. Change a message here and in the charts' CEL
// together.
//
// It is pure: no client, no API types beyond RawExtension. IP arithmetic
// belongs to internal/ipaddr; what only one driver reads stays in it.
package classparams
