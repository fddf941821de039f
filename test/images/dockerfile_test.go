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

package images

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDockerfileMatchesTheManagerImages reads the Dockerfile, which builds
// the released manager images, and checks that the archives of the
// managers are the same image: the binary built the same way and started
// the same way. It checks too that the builder stage cross-compiles from
// the build machine's platform rather than running under emulation.
func TestDockerfileMatchesTheManagerImages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// The instructions of each stage, in order, without comments.
	var stages [][]string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], line)
		}
	}
	if len(stages) != 2 {
		t.Fatalf("the Dockerfile has %d stages, want a builder and the image", len(stages))
	}
	builder, image := stages[0], stages[1]

	if !strings.HasPrefix(builder[0], "FROM --platform=$BUILDPLATFORM ") {
		t.Errorf("the builder stage %q does not run on the build machine's platform (--platform=$BUILDPLATFORM)", builder[0])
	}
	for _, arg := range []string{"ARG TARGETOS", "ARG TARGETARCH"} {
		if !slices.Contains(builder, arg) {
			t.Errorf("the builder stage does not declare %q, so the build cannot see it", arg)
		}
	}
	i := slices.IndexFunc(builder, func(l string) bool { return strings.Contains(l, " go build ") })
	if i < 0 {
		t.Fatal("the builder stage runs no go build")
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOOS=${TARGETOS", "GOARCH=${TARGETARCH}", "-trimpath", "-o /manager ", `"./cmd/${BINARY}"`} {
		if !strings.Contains(builder[i], want) {
			t.Errorf("the build %q has no %s, which goBuild (and so the archives) uses", builder[i], want)
		}
	}

	for _, want := range []string{"FROM gcr.io/distroless/static:nonroot", "WORKDIR /"} {
		if !slices.Contains(image, want) {
			t.Errorf("the image stage has no %q; it is %q", want, image)
		}
	}
	for _, name := range []string{"address-controller", "metallb-iad", "cilium-iad"} {
		m := imageNamed(t, name)
		entrypoint, err := json.Marshal([]string{m.Entrypoint})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"COPY --from=builder /manager " + m.Entrypoint,
			"USER " + m.User,
			"ENTRYPOINT " + string(entrypoint),
		} {
			if !slices.Contains(image, want) {
				t.Errorf("the image stage has no %q, which the archive of %s follows; it is %q", want, name, image)
			}
		}
	}
}
