package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, documented in the README.
const (
	exitOK         = 0 // success
	exitError      = 1 // the run or command failed
	exitUsage      = 2 // bad flags or arguments
	exitIncomplete = 3 // the run finished but a source was missing: breaks are not the whole truth
	exitBreaks     = 4 // open breaks found (only with --fail-on-breaks)
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a specific exit code out of a command.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &codeError{exitUsage, fmt.Errorf(format, args...)}
}

// app holds what every command shares.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            *slog.Logger
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	root := &cobra.Command{
		Use:   "recon",
		Short: "Reconcile a payment network participant's books",
		Long: `recon extracts the network's reports (PAYMENT_OPS, RECON, FAILURE_CONVERSION_SSA) and
ledger statements, loads them into a DuckDB file, runs the reconciliation rules and
archives the break reports (CSV, JSON summary, manifest).

Configuration comes from flags, then RECON_* environment variables, then defaults.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &codeError{exitUsage, err} })
	root.AddCommand(a.runCmd(), a.demoCmd(), a.sandboxCmd(), a.breaksCmd())
	root.AddCommand(a.archiveCmd())
	root.AddCommand(a.replayCmd())
	root.AddCommand(a.diffCmd())
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		if ce.code == exitUsage {
			fmt.Fprintf(stderr, "recon: %v\nRun 'recon --help' for usage.\n", ce.err)
		} else if ce.err != nil {
			fmt.Fprintf(stderr, "recon: %v\n", ce.err)
		}
		return ce.code
	}
	if isUsage(err) {
		fmt.Fprintf(stderr, "recon: %v\nRun 'recon --help' for usage.\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "recon: %v\n", err)
	return exitError
}

// isUsage recognises cobra's own errors about unknown commands and arguments.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "accepts ", "requires ", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
