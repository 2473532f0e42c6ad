package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) breaksCmd() *cobra.Command {
	var rules, severities, workflows []string
	var open bool
	var format string
	cmd := &cobra.Command{
		Use:   "breaks",
		Short: "List breaks from the published DuckDB file",
		Long: `breaks lists the breaks of the published DuckDB file (opened read-only, so it never
gets in a run's way), most severe first. --rule and --severity take several values,
repeated or comma-separated. The table shows the main columns; csv and json show all
of them, amounts as exact decimal text. workflow_status, last_reason and last_by say
what finance decided (recon breaks ack|explain|writeoff|reopen); pending shows an
action journalled but not applied yet (the next run applies it).

--open lists the breaks of the view open_breaks: not resolved, and not explained or
written off.`,
		Example: `  recon breaks --open
  recon breaks --open --severity P1 --format csv > p1.csv
  recon breaks --rule payment_missing_in_statement,ops_missing_in_recon --format json
  recon breaks --open --workflow open --severity P1      # unhandled P1s
  recon breaks ack 3f2a9c0d1e2b4a5c --reason "seen, waiting for the provider"
  recon breaks verify`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			for _, s := range severities {
				if !slices.Contains([]string{"P1", "P2", "P3", "P4"}, s) {
					return usageErr("--severity %q: want P1, P2, P3 or P4", s)
				}
			}
			db, err := a.openPublished(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			for _, w := range workflows {
				if !slices.Contains([]string{"open", "acknowledged", "explained", "written_off"}, w) {
					return usageErr("--workflow %q: want open, acknowledged, explained or written_off", w)
				}
			}
			l, err := pipeline.Ledger{DB: db.DB}.Breaks(cmd.Context(), pipeline.BreakFilter{
				Open: open, Rules: rules, Severities: severities, Workflows: workflows, All: format != "table"})
			if err != nil {
				return err
			}
			defer l.Close()
			t := table{cols: l.Cols, rows: l.Rows()}
			if err := a.addPending(cmd, &t); err != nil {
				return err
			}
			if err := errors.Join(t.write(a.stdout, format), l.Err()); err != nil {
				return err
			}
			return a.notePending(cmd)
		},
	}
	cmd.Flags().BoolVar(&open, "open", false, "only open breaks (new or persisting, not explained or written off)")
	cmd.Flags().StringSliceVar(&workflows, "workflow", nil, "only breaks of these workflow statuses (open, acknowledged, explained, written_off)")
	cmd.Flags().StringSliceVar(&rules, "rule", nil, "only breaks of these rule ids")
	cmd.Flags().StringSliceVar(&severities, "severity", nil, "only breaks of these severities (P1..P4)")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	addFlags(cmd.Flags(), dbSettings)
	for _, action := range []string{"ack", "explain", "writeoff", "reopen"} {
		cmd.AddCommand(a.breaksActionCmd(action))
	}
	cmd.AddCommand(a.breaksVerifyCmd())
	return cmd
}

// addPending adds the column pending: the actions journalled for each break
// and not applied yet ("explain by alice at ...").
func (a *app) addPending(cmd *cobra.Command, t *table) error {
	pending, err := pendingEvents(cmd.Context(), a.lookup(cmd.Flags(), settingNamed("db")).val)
	if err != nil {
		return err
	}
	t.cols = append(t.cols, "pending")
	rows := t.rows
	t.rows = func(yield func([]*string) bool) {
		for r := range rows {
			var cell *string
			if r[0] != nil {
				var parts []string
				for _, e := range pending[*r[0]] {
					parts = append(parts, fmt.Sprintf("%s by %s at %s: %s", e.Action, e.Actor, e.At.UTC().Format(time.RFC3339), e.Reason))
				}
				if len(parts) > 0 {
					s := strings.Join(parts, "; ")
					cell = &s
				}
			}
			if !yield(append(r, cell)) {
				return
			}
		}
	}
	return nil
}

func checkFormat(f string) error {
	if !slices.Contains(formats, f) {
		return usageErr("--format %q: want table, csv or json", f)
	}
	return nil
}

// openPublished opens the published database read-only (a copy of it while
// another process holds it read-write).
func (a *app) openPublished(cmd *cobra.Command) (*pipeline.Snapshot, error) {
	path := a.lookup(cmd.Flags(), settingNamed("db")).val
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no database at %s yet: a run publishes it (recon run --from --to)", path)
	}
	return pipeline.OpenPublished(path)
}
