package main

import (
	"database/sql"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"recon/pipeline"
)

func (a *app) breaksCmd() *cobra.Command {
	var db, rule string
	var open bool
	cmd := &cobra.Command{
		Use:   "breaks",
		Short: "List breaks from the DuckDB file",
		Example: `  recon breaks --open
  recon breaks --rule payment_missing_in_statement`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := pipeline.OpenDB(db, true)
			if err != nil {
				return err
			}
			defer conn.Close()
			q := `SELECT break_id, rule_id, severity, status, CAST(event_date AS VARCHAR), coalesce(payment_id, ''),
				coalesce(account, ''), coalesce(CAST(difference AS VARCHAR), ''), age_days FROM breaks WHERE true`
			var args []any
			if open {
				q += ` AND status <> 'resolved'`
			}
			if rule != "" {
				q += ` AND rule_id = ?`
				args = append(args, rule)
			}
			rows, err := conn.QueryContext(cmd.Context(), q+` ORDER BY severity, rule_id, event_date, break_id`, args...)
			if err != nil {
				return fmt.Errorf("read breaks from %s: %w", db, err)
			}
			defer rows.Close()
			return printTable(a.stdout, rows)
		},
	}
	cmd.Flags().StringVar(&db, "db", envOr("RECON_DB", "recon.duckdb"), "DuckDB file (env RECON_DB)")
	cmd.Flags().BoolVar(&open, "open", false, "only open breaks (new or persisting)")
	cmd.Flags().StringVar(&rule, "rule", "", "only breaks of this rule id")
	return cmd
}

func printTable(w interface{ Write([]byte) (int, error) }, rows *sql.Rows) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	out := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			out[i] = v.String
		}
		fmt.Fprintln(tw, strings.Join(out, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return tw.Flush()
}
