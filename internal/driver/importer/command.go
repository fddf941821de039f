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
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cozystack/address-controller/internal/driver"
)

// Command is the subcommand of a driver's binary, and of the kubectl plugin,
// that runs an import.
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
	// Timeout bounds each wait for the core and the driver on its own: one
	// wait that stalls fails alone, and the next starts with its own.
	Timeout time.Duration
	// Output is the report's format: OutputText (tables, the default),
	// OutputJSON or OutputYAML (one versioned document, output.go).
	Output string
	// Progress, when not nil, gets a line as each wait starts and ends.
	Progress io.Writer
}

// Driver is a driver the command can import for.
type Driver struct {
	// Name is the driver's binary (metallb-iad): messages name it, and its
	// placeholder namespace is "<Name>-system" unless a flag says otherwise.
	Name string
	// Bind registers the backend's own flags, if any.
	Bind func(*flag.FlagSet)
	// Backend makes the backend once the flags are parsed.
	Backend func() Backend
}

// Subcommand runs `<name> import` and exits, when the command line asks for
// it; otherwise it returns. Main says what the arguments are.
func Subcommand(name string, bind func(*flag.FlagSet), backend func() Backend) {
	if len(os.Args) < 2 || os.Args[1] != Command {
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(Main(ctrl.SetupSignalHandler(), name, bind, backend, os.Args[2:], os.Stdout, os.Stderr))
}

// Main runs `<name> import` with the arguments that follow the subcommand
// and returns the exit code: the command of NewCommand for the one driver
// name, whose backend's own flags bind registers (if any) and which backend
// makes once the flags are parsed.
func Main(ctx context.Context, name string, bind func(*flag.FlagSet), backend func() Backend, args []string, stdout, stderr io.Writer) int {
	cmd := NewCommand(Driver{Name: name, Bind: bind, Backend: backend})
	cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name + " " + Command}
	return Execute(ctx, cmd, args, stdout, stderr)
}

// Execute runs cmd (NewCommand's, or a command above it) with args and
// returns the exit code: 0 once done, 2 for a bad command line, 1 for a run
// that failed. Errors go to stderr, prefixed "error: ".
func Execute(ctx context.Context, cmd *cobra.Command, args []string, stdout, stderr io.Writer) int {
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "error: %v\n", err)
	if errors.As(err, &usageError{}) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}

// usageError is a bad command line: the exit code is 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// ErrIncomplete: a run applied what it could, and some of it failed; the
// output says which. Running it again resumes.
var ErrIncomplete = errors.New("not everything was done; run the same command again to resume")

// Backend is what the import needs of a driver's backend: the provisioner
// it serves and how it reads a Service's pin (driver.Backend.PinnedTo); to
// import at all, driver.Importer, and to hand over, driver.Handoverer.
type Backend interface {
	Provisioner() string
	PinnedTo(svc *corev1.Service) (addrs []netip.Addr, byDriver bool)
}

// capable says what b cannot do of what a run asks, if anything.
func capable(b Backend, name string, handover bool) error {
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
// c, writing its report to out in opts.Output's format.
func Run(ctx context.Context, c client.WithWatch, b Backend, opts Options, out io.Writer) error {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultWaitTimeout
	}
	if err := capable(b, opts.Driver, opts.Mode == ModeHandover); err != nil {
		return err
	}
	if !slices.Contains([]string{OutputText, OutputJSON, OutputYAML}, opts.Output) {
		return fmt.Errorf("unknown output format %q", opts.Output)
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
	if opts.Output == OutputText {
		printPlan(out, plan, opts.Scope)
		if !opts.Apply {
			_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to import")
			return nil
		}
		_, _ = fmt.Fprintln(out)
	}
	var outcomes []Outcome
	if opts.Apply {
		outcomes = apply(ctx, c, d, o, plan, opts.Timeout, newProgress(opts.Progress))
	}
	return report(out, opts, func() int { return printOutcomes(out, outcomes) }, importDocument(opts, plan, outcomes))
}

func runUndo(ctx context.Context, c client.WithWatch, d importing, opts Options, out io.Writer) error {
	undos, err := planUndo(ctx, c, opts.Scope)
	if err != nil {
		return err
	}
	results := map[string]error{}
	if opts.Apply {
		p := newProgress(opts.Progress)
		for _, u := range undos {
			if u.Reason == "" {
				p.total++
			}
		}
		for _, u := range undos {
			if u.Reason == "" {
				results[u.Namespace+"/"+u.Claim] = undo(ctx, c, u, d.ImportPin(), opts.Timeout, p)
			}
		}
	}
	text := func() int {
		failed := printUndo(out, undos, results)
		if !opts.Apply {
			_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to undo")
		}
		return failed
	}
	return report(out, opts, text, undoDocument(opts, undos, results))
}

// document is a run's output as -o json|yaml writes it.
type document interface {
	// failed counts what the run applied and did not finish.
	failed() int
}

// report writes a run's outcome as text (text prints it and counts what
// did not finish) or as doc, and fails with ErrIncomplete if anything did
// not finish.
func report(out io.Writer, opts Options, text func() int, doc document) error {
	var failed int
	if opts.Output == OutputText {
		failed = text()
	} else {
		failed = doc.failed()
		if err := writeDocument(out, opts.Output, doc); err != nil {
			return err
		}
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
	if opts.Output == OutputText {
		printHandover(out, h, opts.Class)
		if !opts.Apply {
			_, _ = fmt.Fprintln(out, "dry run: nothing was changed; run again with --apply to hand over")
			return nil
		}
	}
	if opts.Apply {
		newProgress(opts.Progress).line("IPAddressClass %s: handing over, then waiting up to %s for it to be Rendered", opts.Class, opts.Timeout)
		err = handover(ctx, c, h, opts.Class, opts.Driver, opts.Timeout)
	}
	if opts.Output != OutputText {
		if werr := writeDocument(out, opts.Output, handoverDocument(opts, h, err)); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if opts.Output == OutputText {
		_, _ = fmt.Fprintf(out, "handed over: IPAddressClass %s is Rendered\n", opts.Class)
	}
	return nil
}
