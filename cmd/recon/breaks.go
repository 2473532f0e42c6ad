package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	reconsql "recon/sql"
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
			cols := `break_id, rule_id, severity, status, CAST(event_date AS VARCHAR) AS event_date,
				CAST(age_days AS VARCHAR) AS age_days, payment_id, account, currency, CAST(difference AS VARCHAR) AS difference`
			if format != "table" {
				cols += `, end_to_end_id, CAST(expected AS VARCHAR) AS expected, CAST(actual AS VARCHAR) AS actual,
					detail, left_source, right_source, first_seen_run, CAST(first_seen_at AS VARCHAR) AS first_seen_at,
					last_seen_run, resolved_run`
			}
			q := `SELECT ` + cols + ` FROM breaks WHERE true`
			var args []any
			if open {
				q += ` AND status <> 'resolved'`
			}
			q, args = whereIn(q, args, "rule_id", rules)
			q, args = whereIn(q, args, "severity", severities)
			rows, err := db.QueryContext(cmd.Context(), q+` ORDER BY severity, rule_id, event_date, break_id`, args...)
			if err != nil {
				return fmt.Errorf("read breaks: %w", err)
			}
			t, err := readTable(rows)
			if err != nil {
				return fmt.Errorf("read breaks: %w", err)
			}
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

func whereIn(q string, args []any, col string, vals []string) (string, []any) {
	if len(vals) == 0 {
		return q, args
	}
	q += ` AND ` + col + ` IN (?` + strings.Repeat(", ?", len(vals)-1) + `)`
	for _, v := range vals {
		args = append(args, v)
	}
	return q, args
}

func checkFormat(f string) error {
	if !slices.Contains(formats, f) {
		return usageErr("--format %q: want table, csv or json", f)
	}
	return nil
}

// openPublished opens the published database read-only.
func (a *app) openPublished(cmd *cobra.Command) (*sql.DB, error) {
	path := a.lookup(cmd.Flags(), settingNamed("db")).val
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no database at %s yet: a run publishes it (recon run --from --to)", path)
	}
	return reconsql.OpenDB(path, true)
}
