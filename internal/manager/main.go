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

package manager

import (
	"flag"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/version"
)

// Main is a manager binary's whole life: it registers the shared flags
// (with leaseID as the default leader lease) and the binary's own (bind),
// parses them, builds the manager (tune scopes its cache), lets setup
// register the controllers, and runs until a signal. It exits the process
// on any failure, after logging it. With --version it prints which build it
// is and exits.
func Main(leaseID string, bind func(*flag.FlagSet), setup func(ctrl.Manager) error, tune ...func(*ctrl.Options)) {
	var opts Options
	binary, _, _ := strings.Cut(leaseID, ".")
	opts.BindFlags(flag.CommandLine, leaseID)
	bind(flag.CommandLine)
	showVersion := flag.Bool("version", false, "Print the binary's version, commit, Go version and platform, and exit.")
	flag.Parse()
	build := version.Get()
	if *showVersion {
		fmt.Println(build.Line(binary))
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.Zap)))
	log := ctrl.Log.WithName("setup")
	log.Info("Starting "+binary, "version", build.Version, "commit", build.Commit, "go", build.GoVersion, "platform", build.Platform)
	soft, err := applyMemoryLimit(os.Getenv)
	if err != nil {
		log.Error(err, "Failed to set the Go runtime's memory limit")
		os.Exit(1)
	}
	if soft > 0 {
		log.Info("Go runtime's memory limit set from the container's", "bytes", soft)
	}

	mgr, err := opts.New(ctrl.GetConfigOrDie(), NewScheme(), tune...)
	if err != nil {
		log.Error(err, "Failed to create manager")
		os.Exit(1)
	}
	if err := setup(mgr); err != nil {
		log.Error(err, "Failed to set up the controllers")
		os.Exit(1)
	}
	log.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}
