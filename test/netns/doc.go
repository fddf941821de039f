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

// Package netns holds what the test beds that build networks of namespaces
// share: a network namespace to run code in, a bridge and the veth pairs
// that plug namespaces into it, and the proxy that lets a namespace reach
// the API server on the host's loopback. test/wire (the MetalLB speaker's
// wire) and test/node (real nodes) both build on it, so that the way a
// socket is opened inside a namespace is written once.
//
// It makes and deletes only the namespaces and links it is asked for, and
// never touches the host's own network beyond reading it.
package netns
