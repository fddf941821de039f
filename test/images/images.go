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

// An Image is one image Build writes: the binary in it, how it starts, and
// where its reference comes from.
type Image struct {
	// Name names the image in this package, the command's -only flag and
	// the archive (<Name>.tar).
	Name string
	// Entrypoint is the binary's path in the image, which the image starts.
	Entrypoint string
	// User runs the entrypoint, as uid:gid; empty runs it as root.
	User string

	// module is the folder of the Go module the binary is built in,
	// relative to the repository's root.
	module string
	// pkg is the package built, in that module.
	pkg string
	// ldflags are the linker flags of the build.
	ldflags string

	// chart says which chart names the image's repository by default;
	// repository is used when no chart does.
	chart      *chartValue
	repository string
}

// A chartValue is the image repository a chart's values.yaml names.
type chartValue struct {
	// goModule, when set, is the Go module the chart ships in (resolved
	// from the image's module); otherwise the chart is in this repository.
	goModule string
	// dir is the chart's folder, in the repository or in goModule.
	dir string
	// key is the path of the repository in values.yaml.
	key []string
}

// nonroot runs the managers as distroless' nonroot user, as the Dockerfile's
// base image (gcr.io/distroless/static:nonroot) does.
const nonroot = "65532:65532"

// metallbModule is the tools module that pins MetalLB (make metallb builds
// from it too).
const metallbModule = "hack/tools/metallb"

// Images lists every image Build writes, in order.
func Images() []Image {
	return []Image{
		manager("address-controller"),
		manager("metallb-iad"),
		manager("cilium-iad"),
		// MetalLB's images, as its own Dockerfiles make them (distroless
		// static, root: the speaker answers ARP with raw sockets). The
		// speaker image holds the speaker alone, not the FRR tools, so it
		// serves MetalLB's chart with speaker.frr.enabled=false (layer 2
		// and native BGP).
		metallb("controller"),
		metallb("speaker"),
		// The pod sandbox: the container runtime names it in its own
		// configuration, no chart does. The user is the real pause's.
		{
			Name: "pause", Entrypoint: "/pause", User: "65535:65535",
			module: ".", pkg: "./test/images/pause", ldflags: "-s -w",
			repository: "registry.k8s.io/pause",
		},
	}
}

// manager is the image of one of this repository's managers, as the
// Dockerfile builds it with --build-arg BINARY=name.
func manager(name string) Image {
	return Image{
		Name: name, Entrypoint: "/manager", User: nonroot,
		module: ".", pkg: "./cmd/" + name,
		chart: &chartValue{dir: "charts/" + name, key: []string{"image", "repository"}},
	}
}

// metallb is the image of one of MetalLB's binaries, as its chart names it.
func metallb(binary string) Image {
	return Image{
		Name: "metallb-" + binary, Entrypoint: "/" + binary,
		module: metallbModule, pkg: "go.universe.tf/metallb/" + binary,
		chart: &chartValue{
			goModule: "go.universe.tf/metallb", dir: "charts/metallb",
			key: []string{binary, "image", "repository"},
		},
	}
}
