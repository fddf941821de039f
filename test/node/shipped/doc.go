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

// Package shipped runs what a user installs, as shipped, on the real nodes
// of the node harness (test/node): the images test/images writes (the ones
// the Dockerfile builds, without a daemon), imported on every node, and the
// charts installed with the pinned helm, their defaults changed only in the
// image tag and pull policy (and the replica count where a test says so).
// Each test names the artefacts it exercises: the image, the chart's
// templates, the values.
//
// Its tests run as root under build tag node (`make test-node`), like the
// harness's own; the cluster is started without this project's CRDs, which
// the core chart installs, as on a new cluster.
//
// It must not import the managers' packages: it talks to the cluster
// through the API, kubectl and helm alone.
package shipped
