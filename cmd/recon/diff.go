package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"recon/output"
	reconsql "recon/sql"
)

func (a *app) diffCmd() *cobra.Command {
	var runs []string
	var format string
	cmd := &cobra.Command{
		Use:   "diff --run A --run B",
		Short: "List the breaks new, resolved or changed between two archived runs",
		Long: `diff compares the breaks two archived runs reported, over the days both windows
cover: new (open in B, not in A), resolved (open in A, not open in B) and changed (open
in both with another severity, amount or detail). It reads breaks.parquet of each run,
checked against its manifest.`,
		Example: `  recon diff --run r-20261011T003000Z --run r-20261012T003000Z --archive s3://finance-recon/nightly
  recon diff --run r-20261011T003000Z --run r-20261012T003000Z --format csv > diff.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(runs) != 2 {
				return usageErr("give --run exactly twice: --run A --run B")
			}
			if format != "table" && format != "csv" {
				return usageErr("--format must be table or csv, not %q", format)
			}
			store, err := a.openArchive(cmd)
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "recon-diff-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			db, err := reconsql.OpenDB("", false)
			if err != nil {
				return err
			}
			defer db.Close()
			d, err := output.Diff(cmd.Context(), db, store, runs[0], runs[1], dir)
			if err != nil {
				return err
			}
			if format == "csv" {
				var rows [][]*string
				for _, r := range d.Rows {
					row := make([]*string, len(r))
					for i := range r {
						row[i] = &r[i]
					}
					rows = append(rows, row)
				}
				t := table{cols: d.Columns, rows: slices.Values(rows)}
				return t.write(a.stdout, format)
			}
			fmt.Fprintf(a.stdout, "A %s (%s)  B %s (%s)  compared over %s\n", runs[0], d.A.Run.Window, runs[1], d.B.Run.Window, d.Overlap)
			fmt.Fprintf(a.stdout, "new %d, resolved %d, changed %d\n\n", d.Counts["new"], d.Counts["resolved"], d.Counts["changed"])
			if len(d.Rows) == 0 {
				return nil
			}
			tw := newAligned(a.stdout)
			fmt.Fprintln(tw, strings.Join(d.Columns[:len(d.Columns)-1], "\t"))
			for _, r := range d.Rows {
				fmt.Fprintln(tw, strings.Join(r[:len(r)-1], "\t"))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringArrayVar(&runs, "run", nil, "run id; give it twice, the earlier run first")
	cmd.Flags().StringVar(&format, "format", "table", "table or csv (with the detail column)")
	addFlags(cmd.Flags(), storeSettings)
	return cmd
}
