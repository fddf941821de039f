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

package crashtest

import (
	"os"
	"testing"

	mt "github.com/cozystack/address-controller/internal/driver/metallb/metallbtest"
)

// The tests here kill the driver in the middle of a handoff, again and
// again, one at a time. They stop nothing else, and get a control plane of
// their own so that they run beside stoptest's.
func TestMain(m *testing.M) { os.Exit(mt.Main(m, mt.Options{})) }
