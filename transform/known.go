package transform

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// countUnknown rewrites known_values from KnownValues and records in
// unknown_values, for the loader's run, the values of the Enum columns that
// the rows the run loaded hold and the list does not know.
func (l *Loader) countUnknown(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM known_values`); err != nil {
		return fmt.Errorf("known values: %w", err)
	}
	for _, k := range KnownValues() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO known_values VALUES (?, ?, ?)`, k.Table, k.Column, k.Value); err != nil {
			return fmt.Errorf("known values: %w", err)
		}
	}
	run := sql.Named("run_id", l.runID)
	if _, err := tx.ExecContext(ctx, `DELETE FROM unknown_values WHERE run_id = $run_id`, run); err != nil {
		return fmt.Errorf("unknown values: %w", err)
	}
	if _, err := tx.ExecContext(ctx, unknownValuesSQL(), run); err != nil {
		return fmt.Errorf("unknown values: %w", err)
	}
	return tx.Commit()
}

// unknownValuesSQL counts, column by column, the values outside known_values
// in the rows loaded by $run_id. Each column is counted by value before the
// values are matched with the list (at 4.4M RECON rows 1.6 s → 0.2 s).
func unknownValuesSQL() string {
	var parts []string
	for _, t := range allTables() {
		mine := "run_id = $run_id"
		if t.Prov == ByReport {
			mine = "report_id IN (SELECT report_id FROM report_files WHERE run_id = $run_id)"
		}
		for _, c := range t.Columns {
			if c.Kind == Enum {
				parts = append(parts, fmt.Sprintf(`SELECT '%s' AS table_name, '%s' AS column_name, %s AS value, count(*) AS n
					FROM %s WHERE %s GROUP BY ALL`, t.Name, c.Name, c.Name, t.Name, mine))
			}
		}
	}
	return `INSERT INTO unknown_values
		SELECT $run_id, table_name, column_name, value, sum(n) FROM (` + strings.Join(parts, "\n\t\tUNION ALL ") + `) v
		WHERE value IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM known_values k
				WHERE k.table_name = v.table_name AND k.column_name = v.column_name AND k.value = v.value)
		GROUP BY ALL`
}
