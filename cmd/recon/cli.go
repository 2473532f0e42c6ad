package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, documented in the README.
const (
	exitOK         = 0 // success
	exitError      = 1 // the run or command failed
	exitUsage      = 2 // bad flags, arguments or configuration
	exitIncomplete = 3 // the run finished but a source was missing: breaks are not the whole truth
	exitBreaks     = 4 // open breaks found (only with --fail-on-breaks)
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// codeError carries a specific exit code out of a command.
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
	getenv         func(string) (string, bool)
	command        string     // the command line, for lock holders
	file           configFile // the config file, read before any command runs
	log            *slog.Logger
	logOut         *logWriter // where log lines go: stderr, or above the progress bars
	tty            bool       // stderr is a terminal: text logs and progress bars
}

// Run executes the command line args and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.LookupEnv,
		command: "recon " + strings.Join(args, " "), logOut: &logWriter{w: stderr}, tty: isTerminal(stderr)}
	a.log = slog.New(slog.DiscardHandler)
	var configPath string
	root := &cobra.Command{
		Use:   "recon",
		Short: "Reconcile a payment network participant's books",
		Long: `recon extracts the network's reports (PAYMENT_OPS, RECON, FAILURE_CONVERSION_SSA) and
ledger statements, loads them into a DuckDB file, runs the reconciliation rules and
archives the break reports (CSV, JSON summary, manifest).

Configuration: flags, then RECON_* environment variables, then the TOML file named by
--config or RECON_CONFIG, then defaults. 'recon config check' shows the result.`,
		Example: `  recon config check --config /etc/recon/recon.toml
  recon run --from yesterday --to yesterday
  recon schedule
  recon breaks --open --severity P1`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				configPath, _ = a.getenv("RECON_CONFIG")
			}
			a.file = readConfigFile(configPath)
			a.setupLog(cmd)
			return nil
		},
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &codeError{exitUsage, err} })
	root.PersistentFlags().StringVar(&configPath, "config", "", "TOML configuration file (env RECON_CONFIG)")
	addFlags(root.PersistentFlags(), logSettings)
	root.AddCommand(
		a.runCmd(),
		a.loadCmd(),
		a.scheduleCmd(),
		a.demoCmd(),
		a.sandboxCmd(),
		a.runsCmd(),
		a.breaksCmd(),
		a.rulesCmd(),
		a.configCmd(),
		a.archiveCmd(),
		a.replayCmd(),
		a.diffCmd(),
		a.benchCmd(),
		a.webhookCmd(),
	)
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
