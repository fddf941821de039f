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

// Command metallb-iad is the MetalLB driver of address-controller: it serves
// the classes whose provisioner is metallb.drivers.local.sdn.cozystack.io.
// It only parses flags; internal/driver does the work. Its subcommand
// `metallb-iad import` is the framework's inventory import
// (internal/driver/importer) with the MetalLB backend's import and handover
// capabilities, run with an admin's kubeconfig: the same command, with the
// same flags, as the kubectl plugin's `kubectl ipam import`. It must not
// import the core.
package main
