// Command golangci-lint is golangci-lint with the module plugins that
// .golangci.yml enables (logcheck) linked in. `golangci-lint custom` builds
// the same binary from a clone of golangci-lint's repository; this module
// builds it from the Go module proxy at the versions pinned in go.mod.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	// Registers the logcheck linter (Kubernetes logging conventions).
	_ "sigs.k8s.io/logtools/logcheck/gclplugin"
)

const linterModule = "github.com/golangci/golangci-lint/v2"

func main() {
	info := commands.BuildInfo{Version: "unknown", Commit: "(module build)", Date: "(unknown)", GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		for _, d := range bi.Deps {
			if d.Path == linterModule {
				info.Version = strings.TrimPrefix(d.Version, "v") + "-custom"
			}
		}
	}
	if err := commands.Execute(info); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "The command is terminated due to an error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}
