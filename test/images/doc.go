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

// Package images writes the container images the product ships, and those
// of MetalLB and the pod sandbox (pause) it runs beside, as image archives
// that containerd imports (`ctr -n k8s.io images import`), without Docker
// or a registry: each image is one layer holding a static binary built
// from this repository's Go modules, and a config that starts it as the
// Dockerfile's image does (entrypoint, user, working folder, PATH).
//
// Each archive carries the reference its chart names by default, with a
// local tag: installing a chart from such an archive changes only the tag
// (and pullPolicy: Never). The charts own those repositories: Build reads
// them from each chart's values.yaml, MetalLB's from the chart inside its Go
// module.
//
// It must not import the managers' packages or test/cluster: `make
// images-local` builds it on a machine that has built nothing else.
package images
