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

// Package runkit holds what the two harness programs under test/, the
// benchmark and the chaos harness, share as command-line programs: their
// timestamped progress lines, their HTTP reads of the processes they run,
// and their JSON reports. It knows nothing of this project's types and
// starts nothing.
package runkit
