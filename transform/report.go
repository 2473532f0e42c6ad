package transform

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"recon/extract"
)

// staged describes the temporary stage table of one raw report file.
type staged struct {
	present map[string]bool // known columns present in the file
	extra   []string        // stage columns of unknown headers, as "header" -> stage name pairs
	extraAs []string        // original header of each extra column
	typed   bool            // amounts already DECIMAL in the stage (CSV); else VARCHAR (JSON)
}

// loadReport replaces the slice of one report in its table.
func (l *Loader) loadReport(ctx context.Context, conn *sql.Conn, t *Table, f extract.RawFile) (FileStats, error) {
	st := FileStats{File: f}
	if f.Status == extract.StatusFailed {
		return st, nil // nothing to replace: the previous data stays and the run is incomplete
	}
	var s staged
	if f.Status == extract.StatusReady {
		var err error
		switch strings.ToUpper(f.Format) {
		case extract.FormatCSV:
			s, err = l.stageCSV(ctx, conn, t, filepath.Join(l.dir, filepath.FromSlash(f.Path)))
		default:
			err = fmt.Errorf("format %q not supported yet", f.Format)
		}
		if err != nil {
			return st, fmt.Errorf("stage %s: %w", f.Path, err)
		}
	} else if err := emptyStage(ctx, conn, t); err != nil { // EMPTY: the window now has no rows
		return st, err
	}
	if err := l.createView(ctx, conn, t, s); err != nil {
		return st, fmt.Errorf("validate %s: %w", f.Path, err)
	}
	if err := l.fillRaw(ctx, conn, f); err != nil {
		return st, err
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	args := []any{
		sql.Named("start", f.Window.Start()), sql.Named("end", f.Window.End()),
		sql.Named("report_id", f.ReportID), sql.Named("file", f.Path), sql.Named("run_id", l.runID),
		sql.Named("source", t.Source), sql.Named("type", reportType(t)),
		sql.Named("from", f.Window.From), sql.Named("to", f.Window.To), sql.Named("account", nil),
	}
	stmts := []string{
		// Rows of the window, and rows with a key the file brings again, are replaced.
		fmt.Sprintf(`DELETE FROM %s WHERE (%s >= $start AND %s < $end) OR EXISTS (
			SELECT 1 FROM stage_v s WHERE s.reason IS NULL AND %s)`, t.Name, t.WindowTime, t.WindowTime, keyMatch(t)),
		deleteQuarantineSQL,
		insertSQL(t, s),
		`INSERT INTO quarantine (source, account, window_from, window_to, source_file, report_id, line, reason, raw, run_id)
			SELECT $source, NULL, $from, $to, $file, $report_id, line, reason, raw, $run_id FROM stage_quarantine ORDER BY line`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return st, fmt.Errorf("load %s into %s: %w", f.Path, t.Name, err)
		}
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE reason IS NULL), (SELECT count(*) FROM stage_quarantine) FROM stage_v`).
		Scan(&st.Rows, &st.Quarantined); err != nil {
		return st, fmt.Errorf("count %s: %w", f.Path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO report_files VALUES ($report_id, $type, $format, $status,
		$from, $to, $file, $sha, $size, $rows, $quarantined, $run_id)`,
		sql.Named("report_id", f.ReportID), sql.Named("type", reportType(t)), sql.Named("format", f.Format),
		sql.Named("status", f.Status), sql.Named("from", f.Window.From), sql.Named("to", f.Window.To),
		sql.Named("file", f.Path), sql.Named("sha", f.SHA256), sql.Named("size", f.Size),
		sql.Named("rows", st.Rows), sql.Named("quarantined", st.Quarantined), sql.Named("run_id", l.runID)); err != nil {
		return st, fmt.Errorf("record report %s: %w", f.ReportID, err)
	}
	return st, tx.Commit()
}

func reportType(t *Table) string {
	switch t.Source {
	case extract.SourcePaymentOps:
		return extract.ReportPaymentOps
	case extract.SourceRecon:
		return extract.ReportRecon
	default:
		return extract.ReportFailureConversion
	}
}

func keyMatch(t *Table) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		parts[i] = fmt.Sprintf("%s.%s IS NOT DISTINCT FROM s.%s", t.Name, k, k)
	}
	return strings.Join(parts, " AND ")
}

// stageCSV reads the file with DuckDB's own CSV reader into stage, amounts
// typed (cast errors land in the rejects table with their line), every other
// column as text, and matches the header by name.
func (l *Loader) stageCSV(ctx context.Context, conn *sql.Conn, t *Table, path string) (staged, error) {
	header, err := readHeader(path)
	if err != nil {
		return staged{}, err
	}
	s := staged{present: map[string]bool{}, typed: true}
	defs := make([]string, len(header))
	for i, h := range header {
		name, known := t.Canonical(h)
		typ := "VARCHAR"
		if known {
			if s.present[name] {
				return staged{}, fmt.Errorf("column %q appears twice in the header", name)
			}
			s.present[name] = true
			if t.column(name).Kind == Amount {
				typ = AmountType
			}
		} else {
			name = fmt.Sprintf("extra_%d", i)
			s.extra = append(s.extra, name)
			s.extraAs = append(s.extraAs, strings.TrimSpace(h))
		}
		defs[i] = fmt.Sprintf("%s: '%s'", quoteLit(name), typ)
	}
	for _, c := range t.Columns {
		if c.Required && !s.present[c.Name] {
			return staged{}, fmt.Errorf("required column %s missing from the header", c.Name)
		}
	}
	q := fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE stage AS SELECT * FROM read_csv(%s,
		header = true, auto_detect = false, delim = ',', quote = '"', escape = '"',
		columns = {%s}, store_rejects = true, rejects_table = 'stage_rejects', rejects_scan = 'stage_rejects_scan')`,
		quoteLit(path), strings.Join(defs, ", "))
	for _, pre := range []string{`DROP TABLE IF EXISTS stage_rejects`, `DROP TABLE IF EXISTS stage_rejects_scan`, q} {
		if _, err := conn.ExecContext(ctx, pre); err != nil {
			return staged{}, err
		}
	}
	return s, nil
}

// emptyStage makes an empty stage and rejects table for an EMPTY report.
func emptyStage(ctx context.Context, conn *sql.Conn, t *Table) error {
	defs := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		defs[i] = c.Name + " VARCHAR"
	}
	for _, q := range []string{
		`CREATE OR REPLACE TEMP TABLE stage (` + strings.Join(defs, ", ") + `)`,
		`CREATE OR REPLACE TEMP TABLE stage_rejects (line BIGINT, column_name VARCHAR, error_type VARCHAR, csv_line VARCHAR, error_message VARCHAR)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("empty stage: %w", err)
		}
	}
	return nil
}

// createView defines stage_v (every accepted row with its line and the reason
// it is invalid, or null) and stage_quarantine (rejected and invalid lines).
func (l *Loader) createView(ctx context.Context, conn *sql.Conn, t *Table, s staged) error {
	var checks []string
	for _, c := range t.Columns {
		if !s.present[c.Name] {
			if c.Required {
				checks = append(checks, fmt.Sprintf(`'missing %s'`, c.Name))
			}
			continue
		}
		col := "s." + c.Name
		if c.Required {
			checks = append(checks, fmt.Sprintf(`CASE WHEN nullif(trim(%s), '') IS NULL THEN 'missing %s' END`, col, c.Name))
		}
		switch c.Kind {
		case Time:
			checks = append(checks, fmt.Sprintf(`CASE WHEN %s IS NOT NULL AND TRY_CAST(%s AS TIMESTAMPTZ) IS NULL
				THEN 'bad timestamp in %s: ' || %s END`, col, col, c.Name, col))
		case Amount:
			if !s.typed {
				checks = append(checks, fmt.Sprintf(`CASE WHEN %s IS NOT NULL AND TRY_CAST(%s AS %s) IS NULL
					THEN 'bad decimal in %s: ' || %s END`, col, col, AmountType, c.Name, col))
			}
		case Enum:
			checks = append(checks, fmt.Sprintf(`CASE WHEN %s IS NOT NULL AND %s NOT IN (%s)
				THEN 'unknown %s: ' || %s END`, col, col, quoteList(c.Values), c.Name, col))
		}
	}
	reason := "NULL"
	if len(checks) > 0 {
		reason = "concat_ws('; ', " + strings.Join(checks, ", ") + ")"
	}
	// DuckDB keeps file order in stage; the line of the k-th accepted row is
	// k + 2 plus the number of rejected lines before it (an ASOF join on the
	// rejected lines' thresholds).
	qs := []string{
		`CREATE OR REPLACE TEMP TABLE stage_thresholds AS
			SELECT line - row_number() OVER (ORDER BY line) - 1 AS t, row_number() OVER (ORDER BY line) AS n
			FROM (SELECT DISTINCT line FROM stage_rejects)`,
		fmt.Sprintf(`CREATE OR REPLACE TEMP VIEW stage_v AS
			SELECT s.*, s.rowid + 2 + coalesce(r.n, 0) AS line, nullif(%s, '') AS reason
			FROM stage s ASOF LEFT JOIN stage_thresholds r ON s.rowid >= r.t`, reason),
		`CREATE OR REPLACE TEMP TABLE stage_quarantine AS
			SELECT line, string_agg(DISTINCT CASE error_type
					WHEN 'MISSING COLUMNS' THEN 'too few columns'
					WHEN 'TOO MANY COLUMNS' THEN 'too many columns'
					WHEN 'CAST' THEN 'bad value in ' || column_name || ': ' || error_message
					ELSE lower(error_type) || ': ' || error_message END, '; ') AS reason,
				first(csv_line) AS raw
			FROM stage_rejects GROUP BY line
			UNION ALL
			SELECT line, reason, NULL FROM stage_v WHERE reason IS NOT NULL`,
	}
	for _, q := range qs {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// insertSQL converts the valid stage rows into the table's types.
func insertSQL(t *Table, s staged) string {
	names := make([]string, 0, len(t.Columns)+4)
	exprs := make([]string, 0, len(t.Columns)+4)
	for _, c := range t.Columns {
		names = append(names, c.Name)
		if !s.present[c.Name] {
			exprs = append(exprs, "NULL")
			continue
		}
		col := "s." + c.Name
		switch c.Kind {
		case Amount:
			exprs = append(exprs, fmt.Sprintf("CAST(%s AS %s)", col, AmountType))
		case Time:
			exprs = append(exprs, fmt.Sprintf("CAST(%s AS TIMESTAMPTZ)", col))
		case Currency:
			exprs = append(exprs, fmt.Sprintf("upper(trim(%s))", col))
		default:
			exprs = append(exprs, col)
		}
	}
	extra := "NULL"
	if len(s.extra) > 0 {
		kv := make([]string, len(s.extra))
		for i, e := range s.extra {
			kv[i] = fmt.Sprintf("%s, s.%s", quoteLit(s.extraAs[i]), e)
		}
		extra = "json_object(" + strings.Join(kv, ", ") + ")"
	}
	names = append(names, "extra", "report_id", "source_file", "source_line")
	exprs = append(exprs, extra, "$report_id", "$file", "s.line")
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM stage_v s WHERE s.reason IS NULL ORDER BY s.line",
		t.Name, strings.Join(names, ", "), strings.Join(exprs, ", "))
}

// fillRaw copies the exact text of quarantined lines that DuckDB did not give.
func (l *Loader) fillRaw(ctx context.Context, conn *sql.Conn, f extract.RawFile) error {
	rows, err := conn.QueryContext(ctx, `SELECT line FROM stage_quarantine WHERE raw IS NULL ORDER BY line`)
	if err != nil {
		return fmt.Errorf("quarantine lines of %s: %w", f.Path, err)
	}
	var lines []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		lines = append(lines, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(lines) == 0 {
		return err
	}
	raw, err := recordText(filepath.Join(l.dir, filepath.FromSlash(f.Path)), lines)
	if err != nil {
		return fmt.Errorf("read quarantined lines of %s: %w", f.Path, err)
	}
	for n, text := range raw {
		if _, err := conn.ExecContext(ctx, `UPDATE stage_quarantine SET raw = ? WHERE line = ?`, text, n); err != nil {
			return err
		}
	}
	return nil
}

// readHeader returns the first CSV record of path.
func readHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	h, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("no header line")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(h) > 0 {
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	return h, nil
}

// recordText returns the exact bytes of the given records (header = 1).
func recordText(path string, lines []int64) (map[int64]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	want := map[int64]bool{}
	for _, n := range lines {
		want[n] = true
	}
	out := map[int64]string{}
	r := csv.NewReader(strings.NewReader(string(b)))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var start int64
	for n := int64(1); len(out) < len(want); n++ {
		if _, err := r.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		end := r.InputOffset()
		if want[n] {
			out[n] = strings.TrimRight(string(b[start:end]), "\r\n")
		}
		start = end
	}
	return out, nil
}

func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = quoteLit(v)
	}
	return strings.Join(q, ", ")
}
