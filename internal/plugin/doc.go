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

// Package plugin is the kubectl plugin kubectl-ipam (`kubectl ipam ...`):
// its root command and the drivers it knows. Its one subcommand, import, is
// the driver framework's (internal/driver/importer), run for whichever
// driver serves the class: the plugin links every backend and the class's
// provisioner picks one. It is the only package that imports more than one
// backend, and only to ask them what they can do; it runs no manager and
// must not import internal/core.
package plugin
