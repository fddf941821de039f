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

package plugin

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/cozystack/address-controller/internal/driver/cilium"
	"github.com/cozystack/address-controller/internal/driver/importer"
	"github.com/cozystack/address-controller/internal/driver/metallb"
	"github.com/cozystack/address-controller/internal/version"
)

// Name is the plugin's binary: kubectl finds it on PATH and runs it for
// `kubectl ipam`.
const Name = "kubectl-ipam"

// Drivers are the drivers the plugin imports for, each with its backend's
// own import flags.
func Drivers() []importer.Driver {
	var opts metallb.Options
	return []importer.Driver{
		{Name: "metallb-iad", Bind: opts.BindImportFlags, Backend: func() importer.Backend { return metallb.ForImport(opts) }},
		// Its backend has no import capability: a class it serves is
		// refused with that reason.
		{Name: "cilium-iad", Backend: func() importer.Backend { return &cilium.Backend{} }},
	}
}

// NewCommand is the plugin's root command.
func NewCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   Name,
		Short: "Manage address-controller's IP addresses from kubectl",
		Long: `kubectl ipam works with address-controller's IP addresses (IPAddressClass,
IPAddressClaim, IPAddress in local.sdn.cozystack.io). It reads the kubeconfig
as kubectl does and takes kubectl's flags (--kubeconfig, --context,
--namespace, --as, --request-timeout, ...).`,
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ipam"},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	// --version prints the same line as the managers' --version.
	root.Version = version.Get().Version
	root.SetVersionTemplate(version.Get().Line(Name) + "\n")
	root.AddCommand(importer.NewCommand(Drivers()...))
	return root
}

// Main runs the plugin with args (those after its name) and returns the exit
// code: 0 once done, 2 for a bad command line, 1 for a run that failed.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return importer.Execute(ctx, NewCommand(), args, stdout, stderr)
}
