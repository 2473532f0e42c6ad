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
		if st.Changes, err = replaceRows(ctx, tx, t, args); err != nil {
			return st, fmt.Errorf("compare %s with the rows loaded: %w", f.Path, err)
		}
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

// newRowsSQL stages the rows the load just appended (rowid above $last):
// their keys, which the slice replace matches old rows on, and what
// pairedSQL pairs them by: row id, line, and the hashes of their key (_k)
// and tracked values (_h). The stage holds no other column, so it stays
// cheap on wide reports.
func newRowsSQL(t *Table) string {
	return fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE stage AS
		SELECT rowid AS _row, source_line AS _line, %s AS _k, %s AS _h, %s FROM %s WHERE rowid > $last`,
		keyHash(t, ""), trackedHash(t, ""), strings.Join(t.Key, ", "), t.Name)
}

// keyHash is the 128-bit hash of a row's key (columns prefixed p), NULLs
// included: rows are paired by it. Two of 4.4M keys share it with a chance
// of about 10^-26; a 64-bit hash would make that 10^-6.
func keyHash(t *Table, p string) string {
	return fmt.Sprintf("md5_number(to_json([%s]))", prefixed(p, strings.Join(t.Key, ", ")))
}

// trackedHash is the hash of a row's tracked values (columns prefixed p):
// rows paired whose hashes are equal are taken as unchanged. A change goes
// unseen only if its two rows' hashes collide: a chance of 2^-64 each.
func trackedHash(t *Table, p string) string {
	return fmt.Sprintf("hash(%s)", prefixed(p, strings.Join(tracked(t), ", ")))
}

func tracked(t *Table) []string {
	var names []string
	for _, c := range t.Columns {
		if c.Tracked {
			names = append(names, c.Name)
		}
	}
	return names
}

func keyMatch(t *Table, a, b string) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = fmt.Sprintf("%s.%s IS NOT DISTINCT FROM %s.%s", a, k, b, k)
	}
	return strings.Join(parts, " AND ")
}

// replaceRows deletes the rows a load replaces (replacedRows), once the
// changes the load brings to them are recorded. Those rows go into a
// temporary table first, as the stage holds the new rows: row id and the
// hashes of key and tracked values. The two sides are paired in parts by
// their keys' hash (pairedSQL); the pairs whose tracked values' hashes
// differ, and the rows with no pair, are kept, then compared value by value
// (changesSQL). It returns the number of changes recorded.
func replaceRows(ctx context.Context, tx *sql.Tx, t *Table, args []any) (int64, error) {
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE replaced AS
		SELECT o.rowid AS _row, %s AS _k, %s AS _h FROM %s o WHERE %s`,
		keyHash(t, "o."), trackedHash(t, "o."), t.Name, replacedRows(t, "o")), args...); err != nil {
		return 0, fmt.Errorf("find the rows replaced: %w", err)
	}
	defer tx.ExecContext(ctx, `DROP TABLE IF EXISTS replaced`)
	var replaced, added int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM replaced), (SELECT count(*) FROM stage)`).Scan(&replaced, &added); err != nil {
		return 0, fmt.Errorf("count the rows replaced: %w", err)
	}
	if replaced == 0 {
		return 0, nil
	}
	changes, err := recordChanges(ctx, tx, t, args, max(replaced, added))
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE rowid IN (SELECT _row FROM replaced)`, t.Name)); err != nil {
		return 0, fmt.Errorf("delete the rows replaced: %w", err)
	}
	return changes, nil
}

// recordChanges pairs the rows replaced with the new ones, rows on the
// larger side, and records the changes (see replaceRows).
func recordChanges(ctx context.Context, tx *sql.Tx, t *Table, args []any, rows int64) (int64, error) {
	if _, err := tx.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE paired (o_row BIGINT, n_row BIGINT, _n BIGINT)`); err != nil {
		return 0, err
	}
	defer tx.ExecContext(ctx, `DROP TABLE IF EXISTS paired`)
	parts := (rows + pairPart - 1) / pairPart
	for part := range parts {
		if _, err := tx.ExecContext(ctx, pairedSQL(t), sql.Named("parts", parts), sql.Named("part", part)); err != nil {
			return 0, fmt.Errorf("pair the rows (part %d of %d): %w", part+1, parts, err)
		}
	}
	var kept bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (FROM paired)`).Scan(&kept); err != nil || !kept {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, changesSQL(t), args...)
	if err != nil {
		return 0, fmt.Errorf("compare the pairs: %w", err)
	}
	return res.RowsAffected()
}

// pairPart is how many rows a side of one pairing statement holds at most:
// a RECON day of 1M payments (4.4M rows) pairs in one part within 256 MB.
var pairPart int64 = 5_000_000

// pairedSQL pairs one part of the rows replaced with the new rows, by key
// and, for a key listed more than once, by order (_n): in the file for the
// new rows, as loaded for the old. It keeps the pairs whose tracked values'
// hashes differ and the rows with no pair.
// Numbering every row by a window took a 1M-payment day (4.4M rows a side)
// past 384 MB, so only the rows of a key listed more than once are numbered.
func pairedSQL(t *Table) string {
	return fmt.Sprintf(`INSERT INTO paired WITH %s, %s
		SELECT o._row, n._row, o._n FROM old o LEFT JOIN new n ON o._k = n._k AND o._n = n._n
		WHERE n._row IS NULL OR o._h <> n._h`,
		numbered("old", "replaced", "_row"), numbered("new", "stage", "_line"))
}

// changesSQL records, before a report load replaces its slice, every tracked
// value the new generation changes and every row of its window it no longer
// lists, from the pairs pairedSQL kept. Only the rows of those pairs, and
// only the columns compared or recorded, are read, by row id: joined with
// the whole table, the pairs took 3 s even when there were none, and a 1M
// day's reload past 256 MB.
func changesSQL(t *Table) string {
	read := []string{"network_payment_id", "report_id", "source_line", t.WindowTime}
	for _, c := range append(tracked(t), t.Key...) {
		if !contains(read, c) {
			read = append(read, c)
		}
	}
	rowKey := make([]string, len(t.Key))
	for i, k := range t.Key {
		rowKey[i] = fmt.Sprintf("coalesce(o.%s, '')", k)
	}
	rowKeyExpr := fmt.Sprintf("%s || CASE WHEN m._n > 1 THEN '#' || m._n ELSE '' END", strings.Join(rowKey, " || '/' || "))
	var pairCols, diffs, unions []string
	for _, c := range tracked(t) {
		pairCols = append(pairCols, fmt.Sprintf("o.%[1]s AS o_%[1]s, n.%[1]s AS n_%[1]s", c))
		diffs = append(diffs, fmt.Sprintf("o.%[1]s IS DISTINCT FROM n.%[1]s", c))
		unions = append(unions, fmt.Sprintf(`SELECT $type, network_payment_id, row_key, 'changed', '%[1]s',
			CAST(o_%[1]s AS VARCHAR), CAST(n_%[1]s AS VARCHAR), old_report_id, $report_id, old_line, new_line, $run_id
			FROM pairs WHERE o_%[1]s IS DISTINCT FROM n_%[1]s`, c))
	}
	return fmt.Sprintf(`INSERT INTO report_changes
		WITH olds AS MATERIALIZED (
			SELECT rowid AS _row, %[7]s FROM %[1]s WHERE rowid IN (SELECT o_row FROM paired)
		), news AS (
			SELECT rowid AS _row, %[7]s FROM %[1]s WHERE rowid IN (SELECT n_row FROM paired)
		), pairs AS MATERIALIZED (
			SELECT o.network_payment_id, %[2]s AS row_key, o.report_id AS old_report_id, o.source_line AS old_line,
				n.source_line AS new_line, %[3]s
			FROM paired m JOIN olds o ON o._row = m.o_row JOIN news n ON n._row = m.n_row
			WHERE %[4]s
		)
		%[5]s
		UNION ALL
		SELECT $type, o.network_payment_id, %[2]s, 'removed', NULL, NULL, NULL, o.report_id, $report_id, o.source_line, NULL, $run_id
		FROM paired m JOIN olds o ON o._row = m.o_row
		WHERE m.n_row IS NULL AND o.%[6]s >= $start AND o.%[6]s < $end`,
		t.Name, rowKeyExpr, strings.Join(pairCols, ", "), strings.Join(diffs, " OR "),
		strings.Join(unions, "\n\t\tUNION ALL\n\t\t"), t.WindowTime, strings.Join(read, ", "))
}

// numbered is the CTE name over one part of rows (a temporary table), with
// _n, the place of a row among the rows of its key in order: 1 when its key
// is listed once. Only the rows of a key listed more than once go through
// the window.
func numbered(name, rows, order string) string {
	return fmt.Sprintf(`%[1]s_twice AS (
			SELECT _row, row_number() OVER (PARTITION BY _k ORDER BY %[3]s) AS _n FROM %[2]s
			WHERE _k %% $parts = $part AND _k IN (SELECT _k FROM %[2]s WHERE _k %% $parts = $part GROUP BY _k HAVING count(*) > 1)
		), %[1]s AS (
			SELECT r._row, r._k, r._h, coalesce(d._n, 1) AS _n FROM %[2]s r LEFT JOIN %[1]s_twice d ON d._row = r._row
			WHERE r._k %% $parts = $part
		)`, name, rows, order)
}
