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

// Command kubectl-ipam is address-controller's kubectl plugin: on PATH, it
// runs as `kubectl ipam`, with kubectl's flags and the admin's kubeconfig.
// Its subcommand `kubectl ipam import` is the framework's inventory import
// (internal/driver/importer) for whichever driver serves the class. It
// only calls internal/plugin.
package main
