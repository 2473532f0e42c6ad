package transform

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"recon/extract/raw"
)

// loadReport replaces the slice of one report in its table: the rows whose
// window time falls in the report's window, and the rows whose key the file
// brings again. A newer generation's changes to rows already loaded are
// recorded in report_changes first.
func (l *Loader) loadReport(ctx context.Context, conn *sql.Conn, t *Table, f raw.File) (FileStats, error) {
	st := FileStats{File: &f}
	if f.Status == raw.StatusFailed {
		return st, nil // nothing to replace: the previous data stays and the run is incomplete
	}
	produce := func(*builder) error { return nil } // EMPTY: the window now has no rows
	if f.Status == raw.StatusReady {
		switch strings.ToUpper(f.Format) {
		case raw.FormatCSV:
			produce = csvRows(l.path(f), f.Path)
		case raw.FormatJSON:
			produce = jsonReportRows(l.path(f), f.Path)
		default:
			return st, fmt.Errorf("report format %q not supported", f.Format)
		}
	}
	b := newBuilder(t, nil)
	defer b.release()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	// The file's rows go straight into the table (one copy, no stage table);
	// they are told from the rows already there by their rowid ($last).
	last, err := lastRowid(ctx, tx, t)
	if err != nil {
		return st, err
	}
	if err := streamRows(ctx, conn, "stage", b, produce, insertSQL(t, "stage_arrow"),
		sql.Named("report_id", f.ReportID)); err != nil {
		return st, fmt.Errorf("read %s: %w", f.Path, err)
	}
	st.Rows, st.Quarantined = b.loaded[f.Path], int64(len(b.bad))
	if err := stageRecord(ctx, conn, b.bad, []FileStats{st}); err != nil {
		return st, err
	}
	args := append(windowArgs(f),
		sql.Named("report_id", f.ReportID), sql.Named("file", f.Path), sql.Named("run_id", l.runID),
		sql.Named("source", t.Source), sql.Named("type", reportType(t)), sql.Named("account", nil), sql.Named("last", last))
	replace := []string{`DELETE FROM quarantine WHERE source = $source AND account IS NULL AND window_from >= $from AND window_to <= $to`}
	if last >= 0 { // rows before the load to compare and replace: none in an empty table
		if err := execAll(ctx, tx, args, newRowsSQL(t)); err != nil {
			return st, fmt.Errorf("stage the keys of %s: %w", f.Path, err)
		}
		if st.Changes, err = recordChanges(ctx, tx, t, args); err != nil {
			return st, fmt.Errorf("compare %s with the rows loaded: %w", f.Path, err)
		}
		replace = append(replace, fmt.Sprintf(`DELETE FROM %s WHERE %s`, t.Name, replacedRows(t, t.Name)))
	}
	if err := execAll(ctx, tx, args, append(replace, recordFilesSQL...)...); err != nil {
		return st, fmt.Errorf("load %s into %s: %w", f.Path, t.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO report_files VALUES ($report_id, $type, $format, $status,
		$from, $to, $file, $sha, $size, $rows, $quarantined, $run_id)`,
		sql.Named("report_id", f.ReportID), sql.Named("type", reportType(t)), sql.Named("format", strings.ToUpper(f.Format)),
		sql.Named("status", f.Status), sql.Named("from", f.Window.From), sql.Named("to", f.Window.To),
		sql.Named("file", f.Path), sql.Named("sha", f.SHA256), sql.Named("size", f.Size),
		sql.Named("rows", st.Rows), sql.Named("quarantined", st.Quarantined), sql.Named("run_id", l.runID)); err != nil {
		return st, fmt.Errorf("record report %s: %w", f.ReportID, err)
	}
	return st, tx.Commit()
}

func reportType(t *Table) string {
	switch t.Source {
	case raw.SourcePaymentOps:
		return raw.ReportPaymentOps
	case raw.SourceRecon:
		return raw.ReportRecon
	default:
		return raw.ReportFailureConversion
	}
}

// replacedRows is the condition on the table (aliased alias) of the rows a
// report load replaces: rows that were there before the load ($last) in its
// window, or with a key the stage (the new rows) brings. The keys are
// matched by an uncorrelated semi join: a correlated EXISTS was planned as
// a delim join, whose memory a night of 350,000 RECON rows took past 512 MB.
// The join reads the rows before the load only: over the new rows too, a
// first load of a 1M day joined its 4.4M rows with their own keys.
func replacedRows(t *Table, alias string) string {
	return fmt.Sprintf(`%[1]s.rowid <= $last AND ((%[1]s.%[2]s >= $start AND %[1]s.%[2]s < $end)
		OR %[1]s.rowid IN (SELECT k.rowid FROM %[3]s k SEMI JOIN stage s ON %[4]s WHERE k.rowid <= $last))`,
		alias, t.WindowTime, t.Name, keyMatch(t, "k", "s"))
}

// newRowsSQL stages the keys of the rows the load just appended (rowid
// above $last): the slice replace matches old rows on them. The stage holds
// the keys alone, so it stays cheap on wide reports; changesSQL reads the
// tracked columns from the appended rows themselves.
func newRowsSQL(t *Table) string {
	return fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE stage AS SELECT %s FROM %s WHERE rowid > $last`,
		strings.Join(t.Key, ", "), t.Name)
}

func keyMatch(t *Table, a, b string) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = fmt.Sprintf("%s.%s IS NOT DISTINCT FROM %s.%s", a, k, b, k)
	}
	return strings.Join(parts, " AND ")
}

// recordChanges runs changesSQL when the table holds rows the load replaces.
func recordChanges(ctx context.Context, tx *sql.Tx, t *Table, args []any) (int64, error) {
	var replacing bool
	if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s o WHERE %s)`, t.Name, replacedRows(t, "o")),
		args...).Scan(&replacing); err != nil || !replacing {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, changesSQL(t), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// changesSQL records, before a report load replaces its slice, every tracked
// value the new generation changes and every row of its window it no longer
// lists. Rows are paired by key and, for a key listed more than once, by
// order in the file. The pairing carries keys, lines and row ids only; the
// tracked columns are read for the pairs, by row id. Carried through the
// windows and the join, they took a night of 350,000 RECON rows past 512 MB.
func changesSQL(t *Table) string {
	key := strings.Join(t.Key, ", ")
	var tracked []string
	for _, c := range t.Columns {
		if c.Tracked {
			tracked = append(tracked, c.Name)
		}
	}
	keys := key
	if !contains(t.Key, "network_payment_id") {
		keys = "network_payment_id, " + keys
	}
	rowKey := make([]string, len(t.Key))
	for i, k := range t.Key {
		rowKey[i] = fmt.Sprintf("coalesce(o.%s, '')", k)
	}
	rowKeyExpr := fmt.Sprintf("%s || CASE WHEN o._n > 1 THEN '#' || o._n ELSE '' END", strings.Join(rowKey, " || '/' || "))
	var pairCols, diffs, unions []string
	for _, c := range tracked {
		pairCols = append(pairCols, fmt.Sprintf("o.%[1]s AS o_%[1]s, n.%[1]s AS n_%[1]s", c))
		diffs = append(diffs, fmt.Sprintf("o.%[1]s IS DISTINCT FROM n.%[1]s", c))
		unions = append(unions, fmt.Sprintf(`SELECT $type, network_payment_id, row_key, 'changed', '%[1]s',
			CAST(o_%[1]s AS VARCHAR), CAST(n_%[1]s AS VARCHAR), old_report_id, $report_id, old_line, new_line, $run_id
			FROM pairs WHERE o_%[1]s IS DISTINCT FROM n_%[1]s`, c))
	}
	return fmt.Sprintf(`INSERT INTO report_changes
		WITH old AS (
			SELECT o.rowid AS _row, %[10]s, report_id, source_line, %[9]s AS wt,
				row_number() OVER (PARTITION BY %[1]s ORDER BY report_id, source_line) AS _n
			FROM %[2]s o WHERE %[3]s
		), new AS (
			SELECT rowid AS _row, %[1]s, source_line AS _line, row_number() OVER (PARTITION BY %[1]s ORDER BY source_line) AS _n
			FROM %[2]s WHERE rowid > $last
		), matched AS (
			SELECT o._row AS o_row, n._row AS n_row, %[4]s AS row_key, o.report_id AS old_report_id, o.source_line AS old_line,
				n._line AS new_line
			FROM old o JOIN new n ON %[6]s AND o._n = n._n
		), pairs AS MATERIALIZED (
			SELECT o.network_payment_id, m.row_key, m.old_report_id, m.old_line, m.new_line, %[5]s
			FROM matched m JOIN %[2]s o ON o.rowid = m.o_row JOIN %[2]s n ON n.rowid = m.n_row
			WHERE %[7]s
		)
		%[8]s
		UNION ALL
		SELECT $type, o.network_payment_id, %[4]s, 'removed', NULL, NULL, NULL, o.report_id, $report_id, o.source_line, NULL, $run_id
		FROM old o ANTI JOIN new n ON %[6]s AND o._n = n._n
		WHERE o.wt >= $start AND o.wt < $end`,
		key, t.Name, replacedRows(t, "o"), rowKeyExpr, strings.Join(pairCols, ", "),
		keyMatch(t, "o", "n"), strings.Join(diffs, " OR "), strings.Join(unions, "\n\t\tUNION ALL\n\t\t"), t.WindowTime, keys)
}
