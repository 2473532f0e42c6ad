package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) breaksCmd() *cobra.Command {
	var rules, severities []string
	var open bool
	var format string
	cmd := &cobra.Command{
		Use:   "breaks",
		Short: "List breaks from the published DuckDB file",
		Long: `breaks lists the breaks of the published DuckDB file (opened read-only, so it never
gets in a run's way), most severe first. --rule and --severity take several values,
repeated or comma-separated. The table shows the main columns; csv and json show all
of them, amounts as exact decimal text.`,
		Example: `  recon breaks --open
  recon breaks --open --severity P1 --format csv > p1.csv
  recon breaks --rule payment_missing_in_statement,ops_missing_in_recon --format json`,
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
			l, err := pipeline.Ledger{DB: db.DB}.Breaks(cmd.Context(), pipeline.BreakFilter{
				Open: open, Rules: rules, Severities: severities, All: format != "table"})
			if err != nil {
				return err
			}
			t := table{cols: l.Cols, rows: l.Rows}
			return t.write(a.stdout, format)
		},
	}
	cmd.Flags().BoolVar(&open, "open", false, "only open breaks (new or persisting)")
	cmd.Flags().StringSliceVar(&rules, "rule", nil, "only breaks of these rule ids")
	cmd.Flags().StringSliceVar(&severities, "severity", nil, "only breaks of these severities (P1..P4)")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	addFlags(cmd.Flags(), dbSettings)
	return cmd
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
