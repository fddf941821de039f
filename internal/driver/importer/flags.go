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

package importer

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/cozystack/address-controller/api/local/v1alpha1"
	"github.com/cozystack/address-controller/internal/manager"
)

// DefaultWaitTimeout bounds each wait unless --wait-timeout says otherwise.
const DefaultWaitTimeout = 2 * time.Minute

// commandLine is what one command line asks for.
type commandLine struct {
	// config are kubectl's flags: --kubeconfig, --context, --namespace,
	// --as, --request-timeout, and the rest.
	config               *genericclioptions.ConfigFlags
	class, selector      string
	output               string
	allNamespaces        bool
	dryRun, apply        bool
	undo, handover       bool
	wait                 time.Duration
	placeholderNamespace string
}

// NewCommand is the import command for drivers: `kubectl ipam import`
// with every driver the plugin knows, `<driver> import` with the one
// driver. With several, the class's provisioner picks the driver; with one,
// a class of another provisioner is refused. Execute runs it.
func NewCommand(drivers ...Driver) *cobra.Command {
	cl := &commandLine{config: genericclioptions.NewConfigFlags(false)}
	// Nothing here uses discovery, so its cache would be an inert flag.
	cl.config.CacheDir = nil
	cmd := &cobra.Command{
		Use:   Command + " --class CLASS [--apply] [--undo | --handover]",
		Short: "Bring the addresses an allocator already gave Services under claims of a class",
		Long: `Bring the addresses an allocator (MetalLB) already gave LoadBalancer Services under
IPAddressClaims of an IPAddressClass, without any Service changing its address;
undo such an import (--undo); or hand the class's ranges over from the
allocator's own configuration (--handover). Every mode prints what it would do
and changes nothing unless --apply is given.

Services are those of the kubeconfig context's namespace, of --namespace (one,
or several separated by commas), or of every namespace with --all-namespaces.
While it waits for address-controller and the driver, a line per Service says
what it waits for; each wait ends after --wait-timeout on its own.`,
		Example: `  # The plan for every namespace: who gets which claim, who is skipped and why
  kubectl ipam import --class public -A

  # The same plan as a document to review and keep
  kubectl ipam import --class public -A -o yaml > import-public.yaml

  # Import, then hand the class's range over to its own pool
  kubectl ipam import --class public -A --apply
  kubectl ipam import --class public --handover --apply`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected arguments: %v", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cl.run(cmd.Context(), drivers, cmd)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&cl.class, "class", "", "The IPAddressClass to import into (required).")
	fs.BoolVar(&cl.apply, "apply", false, "Do it; without it, print what would be done and change nothing.")
	fs.BoolVar(&cl.dryRun, "dry-run", true, "Print what would be done, change nothing (the default).")
	fs.BoolVar(&cl.undo, "undo", false, "Take back what earlier imports into the class created, where nothing has used it since.")
	fs.BoolVar(&cl.handover, "handover", false, "Move the class's ranges out of the allocator's other configuration into the class's own, once its Services are imported.")
	fs.BoolVarP(&cl.allNamespaces, "all-namespaces", "A", false, "Services of every namespace.")
	fs.StringVarP(&cl.selector, "selector", "l", "", "Only Services matching this label selector.")
	fs.StringVarP(&cl.output, "output", "o", "", "Output format: text (tables, the default), json or yaml (a versioned document: the plan, and with --apply what was done).")
	fs.DurationVar(&cl.wait, "wait-timeout", DefaultWaitTimeout, "How long each wait for address-controller and the driver may last: a claim to be Bound, an undone claim or address to go, the class to be Rendered.")
	fs.DurationVar(&cl.wait, "timeout", DefaultWaitTimeout, "The same as --wait-timeout.")
	_ = fs.MarkDeprecated("timeout", "use --wait-timeout")
	fs.StringVar(&cl.placeholderNamespace, "placeholder-namespace", "", "The driver's placeholder namespace (default <driver>-system, metallb-iad-system for MetalLB).")
	cl.config.AddFlags(fs)
	fs.Lookup("namespace").Usage = "Only Services of this namespace (several: comma-separated); without it, the kubeconfig context's namespace."
	for _, d := range drivers {
		if d.Bind != nil {
			gofs := flag.NewFlagSet(d.Name, flag.ContinueOnError)
			d.Bind(gofs)
			gofs.VisitAll(func(f *flag.Flag) {
				if fs.Lookup(f.Name) == nil {
					fs.AddGoFlag(f)
				}
			})
		}
	}
	return cmd
}

// run checks the command line, then reads the kubeconfig and runs.
func (cl *commandLine) run(ctx context.Context, drivers []Driver, cmd *cobra.Command) error {
	opts, err := cl.options(cmd.Flags())
	if err != nil {
		return err
	}
	backends := make([]Backend, len(drivers))
	for i, d := range drivers {
		backends[i] = d.Backend()
	}
	chosen := -1
	if len(drivers) == 1 {
		// The one driver's capabilities are known before anything is read.
		chosen = 0
		if err := capable(backends[0], drivers[0].Name, cl.handover); err != nil {
			return usageError{err}
		}
	}
	if opts.Namespaces, err = cl.namespaces(); err != nil {
		return err
	}
	cfg, err := cl.config.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	if cfg.QPS == 0 {
		// controller-runtime's defaults, which the command had before it
		// read kubectl's flags; client-go's own (5/s) would slow a large
		// import down.
		cfg.QPS, cfg.Burst = 20, 30
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	if chosen < 0 {
		if chosen, err = pick(ctx, c, backends, opts.Class); err != nil {
			return err
		}
	}
	opts.Driver = drivers[chosen].Name
	if opts.PlaceholderNamespace == "" {
		opts.PlaceholderNamespace = opts.Driver + "-system"
	}
	opts.Progress = cmd.ErrOrStderr()
	return Run(ctx, c, backends[chosen], opts, cmd.OutOrStdout())
}

// options checks the flags that need no cluster, at once.
func (cl *commandLine) options(fs *pflag.FlagSet) (Options, error) {
	opts := Options{Mode: ModeImport, Apply: cl.apply, Timeout: cl.wait, Output: cl.output,
		Scope: Scope{Class: cl.class, PlaceholderNamespace: cl.placeholderNamespace}}
	switch {
	case cl.class == "":
		return opts, usagef("--class is required")
	case cl.undo && cl.handover:
		return opts, usagef("--undo and --handover exclude each other")
	case fs.Changed("dry-run") && cl.dryRun && cl.apply:
		return opts, usagef("--dry-run and --apply exclude each other")
	case fs.Changed("wait-timeout") && fs.Changed("timeout"):
		return opts, usagef("--timeout is the old name of --wait-timeout: give one")
	case cl.wait <= 0:
		return opts, usagef("--wait-timeout must be positive, not %s", cl.wait)
	case !slices.Contains([]string{OutputText, "text", OutputJSON, OutputYAML}, cl.output):
		return opts, usagef("--output must be text, json or yaml, not %q", cl.output)
	}
	if opts.Output == "text" {
		opts.Output = OutputText
	}
	if cl.undo {
		opts.Mode = ModeUndo
	}
	if cl.handover {
		opts.Mode = ModeHandover
	}
	if cl.selector != "" {
		sel, err := labels.Parse(cl.selector)
		if err != nil {
			return opts, usagef("--selector: %v", err)
		}
		opts.Selector = sel
	}
	return opts, nil
}

// namespaces are those of --namespace, every one (nil) with
// --all-namespaces, or else the kubeconfig context's, as kubectl reads them.
func (cl *commandLine) namespaces() ([]string, error) {
	given := *cl.config.Namespace
	if cl.allNamespaces {
		if given != "" {
			return nil, usagef("--all-namespaces and --namespace exclude each other")
		}
		return nil, nil
	}
	if given == "" {
		ns, _, err := cl.config.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, fmt.Errorf("loading the kubeconfig: %w", err)
		}
		return []string{ns}, nil
	}
	var out []string
	for ns := range strings.SplitSeq(given, ",") {
		ns = strings.TrimSpace(ns)
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, usagef("--namespace: %q is no namespace name: %s", ns, strings.Join(errs, "; "))
		}
		out = append(out, ns)
	}
	return out, nil
}

// pick finds the backend that serves the class, by its provisioner.
func pick(ctx context.Context, c client.Reader, backends []Backend, className string) (int, error) {
	class := &v1alpha1.IPAddressClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: className}, class); err != nil {
		return -1, fmt.Errorf("reading IPAddressClass %s: %w", className, err)
	}
	known := make([]string, 0, len(backends))
	for i, b := range backends {
		if b.Provisioner() == class.Spec.Provisioner {
			return i, nil
		}
		known = append(known, b.Provisioner())
	}
	return -1, fmt.Errorf("IPAddressClass %s is served by %q, which is none of the drivers this command knows (%s)",
		className, class.Spec.Provisioner, strings.Join(known, ", "))
}
