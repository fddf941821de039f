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

package charts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// releasePlan runs hack/release-plan.sh in a scratch repository whose only
// commit carries tag, for head branch branch, and returns what it prints.
func releasePlan(t *testing.T, branch string, tags ...string) map[string]string {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "release")
	for _, tag := range tags {
		git("tag", tag)
	}
	sha := git("rev-parse", "HEAD")
	cmd := exec.Command(repoPath(t, "hack", "release-plan.sh"), branch, sha)
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("release-plan.sh %s: %v", branch, err)
	}
	plan := map[string]string{"sha": sha}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		plan[k] = v
	}
	return plan
}

// TestReleasedChartsPullPublishedImages packages every chart the way the
// release workflow does for a tag, and checks that a default install of the
// packaged chart pulls an image the workflow pushes for that tag.
func TestReleasedChartsPullPublishedImages(t *testing.T) {
	for _, tag := range []string{"v1.4.2", "v2.0.0-rc.1"} {
		t.Run(tag, func(t *testing.T) {
			g := NewWithT(t)
			plan := releasePlan(t, tag, tag)
			g.Expect(plan).To(HaveKeyWithValue("kind", "release"))
			version := strings.TrimPrefix(tag, "v")
			g.Expect(plan).To(HaveKeyWithValue("version", version))
			g.Expect(plan).To(HaveKeyWithValue("binary_version", tag), "the binaries report the tag")
			pushed := strings.Split(plan["image_tags"], ",")

			dist := t.TempDir()
			localbin := os.Getenv("LOCALBIN")
			if localbin == "" {
				localbin = repoPath(t, "bin")
			}
			pkg := exec.CommandContext(t.Context(), "make", "-s", "helm-package",
				"CHART_VERSION="+plan["version"], "DIST="+dist, "LOCALBIN="+localbin)
			pkg.Dir = repoPath(t)
			out, err := pkg.CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), "make helm-package:\n%s", out)

			for _, chart := range allCharts {
				archive := filepath.Join(dist, chart+"-"+version+".tgz")
				g.Expect(archive).To(BeAnExistingFile(), "the chart is versioned from the tag")
				rendered, err := runHelm(t, "template", chart, archive, "--namespace", "ipam-system")
				g.Expect(err).NotTo(HaveOccurred())
				objs, err := decodeObjects(rendered)
				g.Expect(err).NotTo(HaveOccurred())
				image := managerContainer(g, deployment(g, objs))["image"].(string)
				repo, imageTag, _ := strings.Cut(image, ":")
				g.Expect(repo).To(Equal("ghcr.io/cozystack/"+chart), "the workflow pushes %s's image there", chart)
				g.Expect(pushed).To(ContainElement(imageTag), "the default image %s is one the release pushes", image)
			}
		})
	}

	t.Run("main publishes images only, under main and main-<sha>", func(t *testing.T) {
		g := NewWithT(t)
		plan := releasePlan(t, "main")
		g.Expect(plan).To(HaveKeyWithValue("kind", "main"))
		g.Expect(plan).NotTo(HaveKey("version"))
		g.Expect(plan).To(HaveKeyWithValue("image_tags", "main,main-"+plan["sha"][:7]))
		g.Expect(plan).To(HaveKeyWithValue("binary_version", "main-"+plan["sha"][:7]))
	})

	t.Run("a tag on another commit, or not a version, publishes nothing", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(releasePlan(t, "v1.4.2")).To(HaveKeyWithValue("kind", "none"), "no such tag on the tested commit")
		g.Expect(releasePlan(t, "nightly", "nightly")).To(HaveKeyWithValue("kind", "none"))
		g.Expect(releasePlan(t, "feature")).To(HaveKeyWithValue("kind", "none"))
	})
}

// TestReleasesWaitForEveryWorkflow: the release workflow publishes a commit
// only once the latest push run of every workflow passed on it.
func TestReleasesWaitForEveryWorkflow(t *testing.T) {
	required := []string{"Tests", "Lint", "E2E Tests (kind)"}
	ready := func(runs ...string) map[string]string {
		t.Helper()
		cmd := exec.Command(repoPath(t, "hack", "release-ready.sh"), required...)
		cmd.Stdin = strings.NewReader(strings.Join(runs, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("release-ready.sh: %v", err)
		}
		got := map[string]string{}
		for line := range strings.Lines(string(out)) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
			got[k] = v
		}
		return got
	}
	run := func(name, status, conclusion, event string) string {
		return strings.Join([]string{name, status, conclusion, event}, "\t")
	}
	for _, tc := range []struct {
		name                   string
		runs                   []string
		ready, waiting, failed string
	}{
		{"all passed", []string{
			run("Tests", "completed", "success", "push"), run("Lint", "completed", "success", "push"),
			run("E2E Tests (kind)", "completed", "success", "push"),
		}, "true", "", ""},
		{"one still running", []string{
			run("Tests", "completed", "success", "push"), run("Lint", "in_progress", "", "push"),
			run("E2E Tests (kind)", "completed", "success", "push"),
		}, "false", "Lint", ""},
		{"one not started, one failed", []string{
			run("Tests", "completed", "success", "push"), run("E2E Tests (kind)", "completed", "failure", "push"),
		}, "false", "Lint", "E2E Tests (kind)"},
		{"a re-run that passed counts, not the failure before it", []string{
			run("Tests", "completed", "success", "push"), run("Lint", "completed", "success", "push"),
			run("E2E Tests (kind)", "completed", "success", "push"), run("E2E Tests (kind)", "completed", "failure", "push"),
		}, "true", "", ""},
		{"a pull request's run is not the push's", []string{
			run("Tests", "completed", "success", "push"), run("Lint", "completed", "success", "pull_request"),
			run("E2E Tests (kind)", "completed", "success", "push"),
		}, "false", "Lint", ""},
		{"cancelled is no pass", []string{
			run("Tests", "completed", "cancelled", "push"), run("Lint", "completed", "success", "push"),
			run("E2E Tests (kind)", "completed", "success", "push"),
		}, "false", "", "Tests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ready(tc.runs...)
			want := map[string]string{"ready": tc.ready, "waiting": tc.waiting, "failed": tc.failed}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
