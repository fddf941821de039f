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

// Command images writes the image archives of test/images: the three
// managers, MetalLB's controller and speaker, and the pod sandbox (pause),
// each a docker-archive tarball that containerd imports, built without
// Docker or a registry. `make images-local` runs it:
//
//	go run ./hack/images -out bin/images -metallb bin/metallb/v0.15.2
//	ctr -n k8s.io images import bin/images/address-controller.tar
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/cozystack/address-controller/test/images"
)

func main() {
	var o images.Options
	var only string
	flag.StringVar(&o.Root, "root", ".", "the repository's root")
	flag.StringVar(&o.Dir, "out", "bin/images", "the folder the archives are written to")
	flag.StringVar(&o.Tag, "tag", images.DefaultTag, "the tag of every image reference")
	flag.StringVar(&o.Arch, "arch", "", "the GOARCH to build for (default: this machine's)")
	flag.StringVar(&o.MetalLB, "metallb", "",
		"the folder make metallb builds MetalLB into; its binaries are used when static and of -arch")
	flag.StringVar(&only, "only", "", "comma-separated images to write (default: all)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "images takes no arguments, only flags (got %q)\n", flag.Args())
		os.Exit(2)
	}
	if only != "" {
		o.Only = strings.Split(only, ",")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	archives, err := images.Build(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "IMAGE\tARCHIVE\tMiB\tBINARY MiB")
	for _, a := range archives {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%.1f\t%.1f\n", a.Ref, a.Path, mib(a.Size), mib(a.BinarySize))
	}
	_ = w.Flush()
	for _, a := range archives {
		if a.Prebuilt != "" {
			fmt.Printf("%s: the binary is %s, as make metallb built it\n", a.Image.Name, a.Prebuilt)
		}
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
