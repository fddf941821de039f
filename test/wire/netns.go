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

package wire

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/cozystack/address-controller/test/netns"
)

// namespace is one of the bed's network namespaces, which it drives with
// iproute2 as well as from Go.
type namespace struct {
	*netns.Namespace
}

// ip runs `ip -n <namespace> args...`.
func (n *namespace) ip(args ...string) error {
	return runIP(append([]string{"-n", n.Name}, args...)...)
}

// sysctl sets kernel parameters inside the namespace.
func (n *namespace) sysctl(settings ...string) error {
	return runIP(append([]string{"netns", "exec", n.Name, "sysctl", "-q", "-w"}, settings...)...)
}

// runIP runs iproute2's `ip args...`, with its output in the error.
func runIP(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
