package output

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"recon/extract/raw"
)

// RunDiff is the difference between the breaks two archived runs reported,
// over the days both windows cover.
type RunDiff struct {
	A, B    Manifest
	Overlap raw.Window
	Columns []string
	Rows    [][]string // ordered by change (new, resolved, changed), rule, break id
	Counts  map[string]int64
}

// diffColumns are RunDiff's columns.
var diffColumns = []string{"change", "break_id", "rule_id", "severity", "event_date", "payment_id", "account",
	"currency", "difference_a", "difference_b", "status_a", "status_b", "detail"}

const diffQuery = `WITH a AS (SELECT * FROM read_parquet($a) WHERE event_date BETWEEN $from AND $to AND status <> 'resolved'),
	b AS (SELECT * FROM read_parquet($b) WHERE event_date BETWEEN $from AND $to),
	j AS (
		SELECT CASE
				WHEN a.break_id IS NULL THEN 'new'
				WHEN b.break_id IS NULL OR b.status = 'resolved' THEN 'resolved'
				WHEN (a.severity, a.currency, a.expected, a.actual, a.difference, a.detail)
					IS DISTINCT FROM (b.severity, b.currency, b.expected, b.actual, b.difference, b.detail) THEN 'changed'
			END AS change,
			coalesce(b.break_id, a.break_id) AS break_id, coalesce(b.rule_id, a.rule_id) AS rule_id,
			coalesce(b.severity, a.severity) AS severity, coalesce(b.event_date, a.event_date) AS event_date,
			coalesce(b.payment_id, a.payment_id) AS payment_id, coalesce(b.account, a.account) AS account,
			coalesce(b.currency, a.currency) AS currency, a.difference AS difference_a, b.difference AS difference_b,
			a.status AS status_a, b.status AS status_b, coalesce(b.detail, a.detail) AS detail
		FROM a FULL JOIN b USING (break_id)
		WHERE a.break_id IS NOT NULL OR b.status <> 'resolved')
	SELECT change, break_id, rule_id, severity, strftime(event_date, '%Y-%m-%d'), coalesce(payment_id, ''),
		coalesce(account, ''), coalesce(currency, ''), CAST(difference_a AS VARCHAR), CAST(difference_b AS VARCHAR),
		coalesce(status_a, ''), coalesce(status_b, ''), coalesce(detail, '')
	FROM j WHERE change IS NOT NULL
	ORDER BY CASE change WHEN 'new' THEN 1 WHEN 'resolved' THEN 2 ELSE 3 END, rule_id, break_id`

// Diff compares the breaks.parquet of two archived runs: breaks open in b
// but not in a (new), open in a but not in b (resolved), and open in both
// with another severity, amount or detail (changed). Only days inside both
// windows count, since a run says nothing about days outside its window.
// db is any DuckDB connection (an in-memory one will do); dir receives the
// two files, checked against their manifests.
func Diff(ctx context.Context, db *sql.DB, store Store, runA, runB, dir string) (*RunDiff, error) {
	d := &RunDiff{Columns: diffColumns, Counts: map[string]int64{"new": 0, "resolved": 0, "changed": 0}}
	var paths [2]string
	for i, id := range []string{runA, runB} {
		prefix, m, err := FindRun(ctx, store, id)
		if err != nil {
			return nil, err
		}
		sub := filepath.Join(dir, fmt.Sprintf("run%d", i+1))
		if err := Fetch(ctx, store, prefix, m, sub, BreaksParquet); err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		paths[i] = filepath.Join(sub, BreaksParquet)
		if i == 0 {
			d.A = m
		} else {
			d.B = m
		}
	}
	wa, wb := d.A.Run.Window, d.B.Run.Window
	d.Overlap = raw.Window{From: wa.From, To: wa.To}
	if wb.From.After(d.Overlap.From) {
		d.Overlap.From = wb.From
	}
	if wb.To.Before(d.Overlap.To) {
		d.Overlap.To = wb.To
	}
	if d.Overlap.To.Before(d.Overlap.From) {
		return nil, fmt.Errorf("runs %s (%s) and %s (%s) cover no common day", runA, wa, runB, wb)
	}
	err := query(ctx, db, diffQuery, []any{sql.Named("a", paths[0]), sql.Named("b", paths[1]),
		sql.Named("from", d.Overlap.From), sql.Named("to", d.Overlap.To)}, func(rows *sql.Rows) error {
		vals := make([]sql.NullString, len(diffColumns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		rec := make([]string, len(vals))
		for i, v := range vals {
			rec[i] = v.String
			if amountColumns[diffColumns[i]] && v.Valid {
				rec[i] = decimalText(v)
			}
		}
		d.Counts[rec[0]]++
		d.Rows = append(d.Rows, rec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", runA, runB, err)
	}
	return d, nil
}
