package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"recon/extract"
	"recon/output"
	"recon/pipeline"
)

func (a *app) runCmd() *cobra.Command {
	cfg := newConfig()
	var from, to string
	var failOnBreaks bool
	cmd := &cobra.Command{
		Use:   "run --from DATE --to DATE",
		Short: "Extract, load, reconcile, report and archive one date range",
		Long: `run reconciles the UTC days from --from to --to (both inclusive): it requests the
reports for the range, pulls the statements of RECON_ACCOUNTS, loads everything into
the DuckDB file, runs the rules and archives the break reports. The DuckDB file is
replaced only when the whole run succeeded.`,
		Example: `  recon run --from 2026-10-01 --to 2026-10-31
  recon run --from yesterday --to yesterday --fail-on-breaks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := window(from, to, time.Now())
			if err != nil {
				return err
			}
			pc, err := cfg.build(a)
			if err != nil {
				return err
			}
			if err := pc.Validate(); err != nil {
				return usageErr("configuration:\n%v", err)
			}
			res, err := pipeline.Run(cmd.Context(), pc, w)
			if err != nil {
				return err
			}
			printResult(a.stdout, res)
			return exitFor(res, failOnBreaks)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "first UTC day, YYYY-MM-DD, today or yesterday")
	cmd.Flags().StringVar(&to, "to", "", "last UTC day (inclusive)")
	cmd.Flags().BoolVar(&failOnBreaks, "fail-on-breaks", false, "exit 4 when open breaks remain")
	cfg.register(cmd.Flags())
	return cmd
}

func window(from, to string, now time.Time) (extract.Window, error) {
	if from == "" || to == "" {
		return extract.Window{}, usageErr("--from and --to are required")
	}
	f, err := parseDay(from, now)
	if err != nil {
		return extract.Window{}, usageErr("--from: %v", err)
	}
	t, err := parseDay(to, now)
	if err != nil {
		return extract.Window{}, usageErr("--to: %v", err)
	}
	w, err := extract.NewWindow(f, t)
	if err != nil {
		return extract.Window{}, usageErr("%v", err)
	}
	return w, nil
}

// exitFor maps a finished run to its exit code.
func exitFor(res *pipeline.Result, failOnBreaks bool) error {
	if res.Verdict == output.Incomplete {
		return &codeError{exitIncomplete, fmt.Errorf("run %s is incomplete", res.RunID)}
	}
	if failOnBreaks && res.Open > 0 {
		return &codeError{exitBreaks, fmt.Errorf("run %s found %d open breaks", res.RunID, res.Open)}
	}
	return nil
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
	fmt.Fprintf(w, "  open breaks in window: %d, resolved by this run: %d\n", res.Open, res.Resolved)
	fmt.Fprintf(w, "  database: %s\n  archive:  %s\n", res.DB, res.Archive)
}
