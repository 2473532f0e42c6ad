package main

import (
	"errors"
	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) runsCmd() *cobra.Command {
	var limit int
	var format string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List published runs with their verdicts, newest first",
		Long: `runs lists the run ledger of the published DuckDB file: window, start and end,
duration, verdict (complete, or incomplete with its reasons) and the open breaks in
the window after the run. A run that failed or was stopped published nothing and is
not listed: its error is in the log and in the metrics file. A run stopped by its
deadline (--run-timeout) is listed as incomplete, its data unpublished.`,
		Example: `  recon runs
  recon runs --limit 7 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if limit < 1 {
				return usageErr("--limit %d: want 1 or more", limit)
			}
			db, err := a.openPublished(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			l, err := pipeline.Ledger{DB: db.DB}.Runs(cmd.Context(), limit)
			if err != nil {
				return err
			}
			defer l.Close()
			t := table{cols: l.Cols, rows: l.Rows()}
			return errors.Join(t.write(a.stdout, format), l.Err())
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 30, "how many runs")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json")
	addFlags(cmd.Flags(), dbSettings)
	return cmd
}
