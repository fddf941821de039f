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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/driver"
	"github.com/cozystack/address-controller/internal/manager"
)

// Command is the subcommand of a driver's binary that runs an import.
const Command = "import"

// Modes of a run.
const (
	ModeImport   = "import"
	ModeUndo     = "undo"
	ModeHandover = "handover"
)

// Options of one run.
type Options struct {
	Scope
	// Driver names the driver, as its binary is called.
	Driver string
	// Mode is ModeImport, ModeUndo or ModeHandover.
	Mode string
	// Apply writes; without it a run only prints what it would do.
	Apply bool
	// Timeout bounds each wait for the core and the driver.
	Timeout time.Duration
}

// Subcommand runs `<name> import` and exits, when the command line asks for
// it; otherwise it returns. Main says what the arguments are.
func Subcommand(name string, bind func(*flag.FlagSet), backend func() driver.Backend) {
	if len(os.Args) < 2 || os.Args[1] != Command {
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(Main(ctrl.SetupSignalHandler(), name, bind, backend, os.Args[2:], os.Stdout, os.Stderr))
}

// Main runs `<name> import` with the arguments that follow the subcommand,
// with the credentials of --kubeconfig (or the usual kubeconfig lookup), and
// returns the exit code. name is the driver's binary; bind registers its
// backend's own flags, if any; backend makes the backend once the flags are
// parsed. A backend that is no driver.Importer cannot import.
func Main(ctx context.Context, name string, bind func(*flag.FlagSet), backend func() driver.Backend, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name+" "+Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	config.RegisterFlags(fs)
	opts := Options{Driver: name}
	var namespaces, selector string
	var dryRun, undo, handover bool
	fs.StringVar(&opts.Class, "class", "", "The IPAddressClass to import into (required).")
	fs.StringVar(&namespaces, "namespace", "", "Only Services of these namespaces (comma-separated); all when empty.")
	fs.StringVar(&selector, "selector", "", "Only Services matching this label selector.")
	fs.BoolVar(&dryRun, "dry-run", true, "Print what would be done, change nothing (the default).")
	fs.BoolVar(&opts.Apply, "apply", false, "Do it.")
	fs.BoolVar(&undo, "undo", false, "Take back what earlier imports into the class created, where nothing has used it since.")
	fs.BoolVar(&handover, "handover", false, "Move the class's ranges out of the allocator's other configuration into the class's own, once its Services are imported.")
	fs.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "How long to wait for address-controller and "+name+" to act.")
	fs.StringVar(&opts.PlaceholderNamespace, "placeholder-namespace", name+"-system", name+"'s placeholder namespace.")
	if bind != nil {
		bind(fs)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	explicitDryRun := false
	fs.Visit(func(f *flag.Flag) { explicitDryRun = explicitDryRun || f.Name == "dry-run" && dryRun })
	switch {
	case opts.Class == "":
		_, _ = fmt.Fprintln(stderr, "--class is required")
		return 2
	case undo && handover:
		_, _ = fmt.Fprintln(stderr, "--undo and --handover exclude each other")
		return 2
	case explicitDryRun && opts.Apply:
		_, _ = fmt.Fprintln(stderr, "--dry-run and --apply exclude each other")
		return 2
	case fs.NArg() > 0:
		_, _ = fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return 2
	}
	b := backend()
	if err := capable(b, name, handover); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 2
	}
	opts.Mode = ModeImport
	if undo {
		opts.Mode = ModeUndo
	}
	if handover {
		opts.Mode = ModeHandover
	}
	for ns := range strings.SplitSeq(namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "--selector: %v\n", err)
			return 2
		}
		opts.Selector = sel
	}
	cfg, err := config.GetConfig()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "loading the kubeconfig: %v\n", err)
		return 1
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "creating a client: %v\n", err)
		return 1
	}
	if err := Run(ctx, c, b, opts, stdout); err != nil {
		_, _ = fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// ErrIncomplete: a run applied what it could, and some of it failed; the
// output says which. Running it again resumes.
var ErrIncomplete = errors.New("not everything was done; run the same command again to resume")

// capable says what b cannot do of what a run asks, if anything.
func capable(b driver.Backend, name string, handover bool) error {
	imp, ok := b.(driver.Importer)
	switch {
	case !ok:
		return fmt.Errorf("%s cannot import: its backend has no import capability (driver.Importer)", name)
	case handover:
		if _, ok := imp.(driver.Handoverer); !ok {
			return fmt.Errorf("%s cannot hand over: its backend has no handover capability (driver.Handoverer)", name)
		}
	}
	return nil
}

// Run carries out one run for the driver whose backend is b, with client
// c, writing its report to out.
func Run(ctx context.Context, c client.WithWatch, b driver.Backend, opts Options, out io.Writer) error {
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	if err := capable(b, opts.Driver, opts.Mode == ModeHandover); err != nil {
		return err
	}
	d := importing{Backend: b, Importer: b.(driver.Importer), name: opts.Driver}
	switch opts.Mode {
	case ModeUndo:
		return runUndo(ctx, c, d, opts, out)
	case ModeHandover:
		return runHandover(ctx, c, d, opts, out)
	}
	o, err := observe(ctx, c, opts.Scope, d)
	if err != nil {
		return err
	}
	plan := MakePlan(o.inv)
	printPlan(out, plan)
	if !opts.Apply {
		_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to import")
		return nil
	}
	_, _ = fmt.Fprintln(out)
	if printOutcomes(out, apply(ctx, c, d, o, plan, opts.Timeout)) > 0 {
		return ErrIncomplete
	}
	return nil
}

func runUndo(ctx context.Context, c client.WithWatch, d importing, opts Options, out io.Writer) error {
	undos, err := planUndo(ctx, c, opts.Scope)
	if err != nil {
		return err
	}
	results := map[string]error{}
	if opts.Apply {
		for _, u := range undos {
			if u.Reason == "" {
				results[u.Namespace+"/"+u.Claim] = undo(ctx, c, u, d.ImportPin(), opts.Timeout)
			}
		}
	}
	failed := printUndo(out, undos, results)
	if !opts.Apply {
		_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to undo")
	}
	if failed > 0 {
		return ErrIncomplete
	}
	return nil
}

func runHandover(ctx context.Context, c client.WithWatch, d importing, opts Options, out io.Writer) error {
	whole := opts.Scope
	whole.Namespaces, whole.Selector = nil, nil
	o, err := observe(ctx, c, whole, d)
	if err != nil {
		return err
	}
	h, err := planHandover(ctx, c, d.Importer.(driver.Handoverer), o, MakePlan(o.inv))
	if err != nil {
		return err
	}
	printHandover(out, h, opts.Class)
	if !opts.Apply {
		_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to hand over")
		return nil
	}
	if err := handover(ctx, c, h, opts.Class, opts.Driver, opts.Timeout); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "handed over: IPAddressClass %s is Rendered\n", opts.Class)
	return nil
}
