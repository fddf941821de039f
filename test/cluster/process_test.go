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

package cluster

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestAProcessGetsItsOwnEnvironment: the variables given to one process
// reach it, beside the test's own, and no other process sees them.
func TestAProcessGetsItsOwnEnvironment(t *testing.T) {
	g := NewWithT(t)
	w, err := startWatchdog()
	g.Expect(err).NotTo(HaveOccurred())
	defer w.release()
	t.Setenv("CLUSTER_TEST_INHERITED", "kept")
	dir := t.TempDir()
	run := func(name string, env []string) string {
		p := newProcess(name, "/bin/sh", dir, "-c", `echo "$CLUSTER_TEST_INHERITED/$CLUSTER_TEST_OWN"`)
		p.env = env
		g.Expect(p.start(w)).To(Succeed())
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not exit", name)
		}
		out, err := os.ReadFile(p.log)
		g.Expect(err).NotTo(HaveOccurred())
		return string(out)
	}
	g.Expect(run("with", []string{"CLUSTER_TEST_OWN=256MiB"})).To(Equal("kept/256MiB\n"))
	g.Expect(run("without", nil)).To(Equal("kept/\n"))
}
