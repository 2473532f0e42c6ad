package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
)

func (a *app) runCmd() *cobra.Command {
	var from, to string
	var failOnBreaks, dryRun, nightly bool
	cmd := &cobra.Command{
		Use:   "run (--from DATE --to DATE | --nightly)",
		Short: "Extract, load, reconcile, report and archive one date range",
		Long: `run reconciles the UTC days from --from to --to (both inclusive): it requests the
reports for the range, pulls the statements of RECON_ACCOUNTS, loads everything into
a working copy of the DuckDB file, runs the rules, archives the break reports and
only then replaces the published file. Dates are YYYY-MM-DD, today or yesterday.

--nightly reconciles what one firing of 'recon schedule' would: yesterday and the
--recheck-days days before it, reaching back to catch up the days missed since the
last complete run (at most --catch-up-days days). It is the command for a systemd
timer or a Kubernetes CronJob.

--dry-run prints the plan (report chunks, the requests extraction begins with, the
rules) and calls nothing.

Only one process writes a database at a time: a second one stops at once and names
the holder. On SIGTERM or Ctrl-C a run that has not started publishing is discarded
(database and archive stay as they were); one that is publishing finishes. A run
still short of publishing after --run-timeout (default 6h) is discarded the same way
and ends incomplete (exit 3), recorded as such in the run ledger.`,
		Example: `  recon run --from 2026-10-01 --to 2026-10-31
  recon run --from yesterday --to yesterday --fail-on-breaks
  recon run --from 2026-01-01 --to 2026-07-19 --dry-run
  recon run --nightly --metrics-file /var/lib/node_exporter/textfile/recon.prom
  RECON_CONFIG=/etc/recon/recon.toml recon run --from yesterday --to today`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var w raw.Window
			var err error
			if !nightly {
				if w, err = window(from, to, time.Now()); err != nil {
					return err
				}
			}
			cfg, err := a.pipelineConfig(cmd, "")
			if err != nil {
				return err
			}
			if nightly { // after the configuration: the window depends on it
				if w, err = a.nightlyWindow(cmd, cfg, from, to); err != nil {
					return err
				}
			}
			if dryRun {
				p, err := pipeline.PlanRun(cfg, w)
				if err != nil {
					return usageErr("%v", err)
				}
				printPlan(a.stdout, cfg, p)
				return nil
			}
			return a.runPipeline(cmd, cfg, w, runOpts{failOnBreaks: failOnBreaks})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "first UTC day: YYYY-MM-DD, today or yesterday")
	cmd.Flags().StringVar(&to, "to", "", "last UTC day (inclusive)")
	cmd.Flags().BoolVar(&failOnBreaks, "fail-on-breaks", false, "exit 4 when open breaks remain in the window")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and call nothing")
	cmd.Flags().BoolVar(&nightly, "nightly", false, "reconcile the window of a nightly run (instead of --from and --to)")
	addFlags(cmd.Flags(), dbSettings, workSettings, storeSettings, rulesSettings, runSettings, nightlySettings)
	return cmd
}

// runOpts are what a command adds to a run of the pipeline.
type runOpts struct {
	failOnBreaks bool
	ended        func() // called as the run ends, before its outcome is printed (nil: none)
	footer       string // printed after the result of a run that published
}

// runPipeline runs the pipeline over w with progress on a terminal, prints
// the result and maps it to the exit code: recon run, load and demo.
func (a *app) runPipeline(cmd *cobra.Command, cfg pipeline.Config, w raw.Window, o runOpts) error {
	ctx, stop := a.withProgress(cmd.Context())
	res, err := pipeline.Run(ctx, cfg, w)
	stop()
	if o.ended != nil {
		o.ended()
	}
	if err != nil {
		return runError(cmd.Context(), err)
	}
	printResult(a.stdout, res)
	fmt.Fprint(a.stdout, o.footer)
	return exitFor(res, o.failOnBreaks)
}

// runError explains a run that published nothing.
func runError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stopped: nothing was published, the database and archive are as before (%w)", err)
	}
	if errors.Is(err, pipeline.ErrLocked) {
		return fmt.Errorf("not started: %w", err)
	}
	return err
}

// nightlyWindow is the window of run --nightly.
func (a *app) nightlyWindow(cmd *cobra.Command, cfg pipeline.Config, from, to string) (raw.Window, error) {
	if from != "" || to != "" {
		return raw.Window{}, usageErr("--nightly takes no --from or --to")
	}
	if err := cfg.Schedule.Validate(); err != nil {
		return raw.Window{}, usageErr("configuration:\n%v", err)
	}
	last, err := pipeline.LastComplete(cmd.Context(), cfg.DB)
	if err != nil {
		return raw.Window{}, err
	}
	w, skipped := pipeline.NightlyWindow(time.Now(), last, cfg.Schedule)
	if skipped != nil {
		a.log.Warn("missed days beyond the catch-up limit are not reconciled; run them by hand", "days", skipped.String())
	}
	return w, nil
}

func window(from, to string, now time.Time) (raw.Window, error) {
	if from == "" || to == "" {
		return raw.Window{}, usageErr("--from and --to are required")
	}
	f, err := parseDay(from, now)
	if err != nil {
		return raw.Window{}, usageErr("--from: %v", err)
	}
	t, err := parseDay(to, now)
	if err != nil {
		return raw.Window{}, usageErr("--to: %v", err)
	}
	w, err := raw.NewWindow(f, t)
	if err != nil {
		return raw.Window{}, usageErr("%v", err)
	}
	return w, nil
}

// exitFor maps a finished run to its exit code.
func exitFor(res *pipeline.Result, failOnBreaks bool) error {
	if res.Verdict == output.Incomplete {
		return &codeError{exitIncomplete, fmt.Errorf("run %s is incomplete", res.RunID)}
	}
	if failOnBreaks && res.Unhandled > 0 { // acknowledged breaks do not count
		return &codeError{exitBreaks, fmt.Errorf("run %s found %d open breaks nobody acknowledged", res.RunID, res.Unhandled)}
	}
	return nil
}

func printPlan(w io.Writer, cfg pipeline.Config, p *pipeline.Plan) {
	fmt.Fprintf(w, "plan (dry run: nothing is called, nothing is written)\n")
	fmt.Fprintf(w, "  reconcile %s (%d days); statements over %s\n", p.Reports, p.Reports.Days(), p.Statements)
	chunks := map[string]int{}
	var types []string
	tw := newAligned(w)
	for _, c := range p.Calls {
		what := c.What
		switch {
		case c.Account != "":
			what += " " + c.Account + " " + c.Window.String()
		case !c.Window.From.IsZero():
			what += " " + c.Window.String()
			if !slices.Contains(raw.ReportTypes, c.What) {
				break
			}
			if chunks[c.What] == 0 {
				types = append(types, c.What)
			}
			chunks[c.What]++
		}
		fmt.Fprintf(tw, "  %s\t%s\tthen %s\n", what, c.Request, c.Then)
	}
	tw.Flush()
	for _, t := range types {
		fmt.Fprintf(w, "  %s: %d chunks of at most %d days\n", t, chunks[t], extract.MaxReportDays)
	}
	fmt.Fprintf(w, "  at least %d requests\n", len(p.Calls))
	fmt.Fprintf(w, "  rules (%d): %s\n", len(p.Rules), strings.Join(p.Rules, ", "))
	fmt.Fprintf(w, "  database: %s (a working copy, published when the run succeeds)\n  archive:  %s\n", cfg.DB, cfg.ArchiveURL)
	if cfg.MetricsFile != "" {
		fmt.Fprintf(w, "  metrics:  %s\n", cfg.MetricsFile)
	}
}

func printResult(w io.Writer, res *pipeline.Result) {
	fmt.Fprintf(w, "run %s over %s: %s\n", res.RunID, res.Window, res.Verdict)
	for _, r := range res.Reasons {
		fmt.Fprintf(w, "  incomplete: %s\n", r)
	}
	sources := make([]string, 0, len(res.Loaded))
	for s := range res.Loaded {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	for _, s := range sources {
		fmt.Fprintf(w, "  loaded %-20s %8d rows\n", s, res.Loaded[s])
	}
	fmt.Fprintf(w, "  quarantined %d rows\n", res.Quarantined)
	ids := make([]string, 0, len(res.Found))
	for id := range res.Found {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintln(w, "  breaks found by rule:")
	for _, id := range ids {
		fmt.Fprintf(w, "    %-34s %6d\n", id, res.Found[id])
	}
	fmt.Fprintf(w, "  open breaks in window: %d (%d unhandled, %d acknowledged), resolved by this run: %d\n",
		res.Open, res.Unhandled, res.Open-res.Unhandled, res.Resolved)
	fmt.Fprintf(w, "  database: %s\n  archive:  %s\n", res.DB, res.Archive)
}
