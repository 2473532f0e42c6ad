package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract/raw"
	"recon/output"
	"recon/rules"
)

// Ledger holds the queries over the run ledger (tables runs and run_stages)
// and the breaks table that the pipeline and the CLI make: the rules write
// breaks (rules/run.go) and the reports read them (output), every other
// query over them is here. DB is a warehouse's working copy or a published
// file opened read-only (OpenPublished).
type Ledger struct{ DB *sql.DB }

// Listing is a query's result as text, read a row at a time: column names
// and rows of cells, a nil cell for NULL; amounts stay exact decimal text.
// A listing of every break can be hundreds of thousands of rows: the
// caller holds what it needs. Close it.
type Listing struct {
	Cols []string
	rows *sql.Rows
	err  error
}

// Rows yields the rows in order, each a new slice; a read error ends them,
// and Err returns it.
func (t *Listing) Rows() iter.Seq[[]*string] {
	return func(yield func([]*string) bool) {
		vals := make([]sql.NullString, len(t.Cols))
		ptrs := make([]any, len(t.Cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for t.rows.Next() {
			if err := t.rows.Scan(ptrs...); err != nil {
				t.err = err
				return
			}
			row := make([]*string, len(vals))
			for i, v := range vals {
				if v.Valid {
					cell := v.String
					row[i] = &cell
				}
			}
			if !yield(row) {
				return
			}
		}
		t.err = t.rows.Err()
	}
}

// Err is the error that ended Rows, if any.
func (t *Listing) Err() error { return t.err }

// Close releases the query's result.
func (t *Listing) Close() error { return t.rows.Close() }

// BreakFilter selects breaks; empty lists select all.
type BreakFilter struct {
	Open       bool     // only open breaks: new or persisting, not explained or written off
	Rules      []string // rule ids
	Severities []string // P1..P4
	Workflows  []string // workflow statuses: open, acknowledged, explained, written_off
	All        bool     // every column, not only the main ones
}

// Breaks lists the breaks f selects, most severe first.
func (l Ledger) Breaks(ctx context.Context, f BreakFilter) (*Listing, error) {
	cols := `break_id, rule_id, severity, status, CAST(event_date AS VARCHAR) AS event_date,
				CAST(age_days AS VARCHAR) AS age_days, payment_id, account, currency, CAST(difference AS VARCHAR) AS difference,
				coalesce(w.workflow_status, 'open') AS workflow_status, w.last_reason, w.last_by`
	if f.All {
		cols += `, end_to_end_id, CAST(expected AS VARCHAR) AS expected, CAST(actual AS VARCHAR) AS actual,
					detail, left_source, right_source, first_seen_run, CAST(first_seen_at AS VARCHAR) AS first_seen_at,
					last_seen_run, resolved_run`
	}
	q := `SELECT ` + cols + ` FROM breaks LEFT JOIN break_workflow w USING (break_id) WHERE true`
	var args []any
	if f.Open { // open: not resolved, and not explained or written off
		q += ` AND status <> 'resolved' AND coalesce(w.workflow_status, 'open') IN ('open', 'acknowledged')`
	}
	q, args = whereIn(q, args, "rule_id", f.Rules)
	q, args = whereIn(q, args, "severity", f.Severities)
	q, args = whereIn(q, args, "coalesce(w.workflow_status, 'open')", f.Workflows)
	t, err := l.list(ctx, q+` ORDER BY severity, rule_id, event_date, break_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read breaks: %w", err)
	}
	return t, nil
}

// Candidate is a break an action may apply to, with the snapshot of it an
// event records (status, severity, amount, currency, counterpart, workflow).
type Candidate struct {
	rules.Event
	Rule string
}

// Candidates reads the breaks named by ids, narrowed by f's rules and
// severities and by age (olderThan days, -1 for any), with their workflow
// status. Without ids, a selection picks unresolved breaks and closed ones.
func (l Ledger) Candidates(ctx context.Context, f BreakFilter, ids []string, olderThan int) ([]Candidate, error) {
	q := `SELECT b.break_id, b.rule_id, b.status, b.severity, coalesce(b.currency, ''), coalesce(CAST(b.difference AS VARCHAR), ''),
			coalesce(b.account, ''), coalesce(w.workflow_status, 'open'), count(*) OVER ()
		FROM breaks b LEFT JOIN break_workflow w USING (break_id) WHERE true`
	var args []any
	q, args = whereIn(q, args, "b.break_id", ids)
	q, args = whereIn(q, args, "b.rule_id", f.Rules)
	q, args = whereIn(q, args, "b.severity", f.Severities)
	if olderThan >= 0 {
		q += ` AND b.age_days > ?`
		args = append(args, olderThan)
	}
	if len(ids) == 0 { // a selection picks open breaks; reopen picks closed ones too
		q += ` AND (b.status <> 'resolved' OR w.workflow_status IS NOT NULL)`
	}
	rows, err := l.DB.QueryContext(ctx, q+` ORDER BY b.severity, b.event_date, b.rule_id, b.break_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read breaks: %w", err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var c Candidate
		var n int
		if err := rows.Scan(&c.BreakID, &c.Rule, &c.BreakStatus, &c.Severity, &c.Currency, &c.Amount, &c.Counterpart,
			&c.PrevWorkflow, &n); err != nil {
			return nil, err
		}
		if out == nil { // sized once: a bulk action reads hundreds of thousands
			out = make([]Candidate, 0, n)
		}
		if d, err := decimal.NewFromString(c.Amount); err == nil {
			c.Amount = d.String()
		}
		out = append(out, c)
	}
	return out, rows.Err()
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

// Runs lists the newest limit runs of the ledger, newest first.
func (l Ledger) Runs(ctx context.Context, limit int) (*Listing, error) {
	t, err := l.list(ctx, `SELECT run_id, CAST(window_from AS VARCHAR) AS window_from,
				CAST(window_to AS VARCHAR) AS window_to, strftime(started_at, '%Y-%m-%dT%H:%M:%SZ') AS started_at,
				CAST(round(epoch(finished_at) - epoch(started_at)) AS BIGINT)::VARCHAR AS seconds, verdict,
				CAST(breaks_open AS VARCHAR) AS open_breaks, nullif(array_to_string(reasons, '; '), '') AS reasons, archive_url
				FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return t, nil
}

// list runs a query whose columns are all VARCHAR, for its rows to be read
// one at a time.
func (l Ledger) list(ctx context.Context, q string, args ...any) (*Listing, error) {
	rows, err := l.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, err
	}
	return &Listing{Cols: cols, rows: rows}, nil
}

// OpenBreaks counts the open breaks of the days of w (not resolved, not
// explained or written off) and, of those, the unhandled ones (not
// acknowledged either).
func (l Ledger) OpenBreaks(ctx context.Context, w raw.Window) (open, unhandled int64, err error) {
	if err := l.DB.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE w.workflow_status IS NULL OR w.workflow_status = 'open')
		FROM breaks b LEFT JOIN break_workflow w USING (break_id)
		WHERE b.status <> 'resolved' AND b.event_date BETWEEN ? AND ?
			AND coalesce(w.workflow_status, 'open') IN ('open', 'acknowledged')`, w.From, w.To).Scan(&open, &unhandled); err != nil {
		return 0, 0, fmt.Errorf("count open breaks: %w", err)
	}
	return open, unhandled, nil
}

// OpenCount is the number of open breaks of a rule.
type OpenCount struct {
	Rule, Severity string
	Open           int64
}

// OpenByRule counts the open breaks by rule and severity.
func (l Ledger) OpenByRule(ctx context.Context) ([]OpenCount, error) {
	var out []OpenCount
	err := l.each(ctx, `SELECT rule_id, severity, count(*) FROM breaks WHERE status <> 'resolved' GROUP BY ALL`, nil,
		func(r *sql.Rows) error {
			var c OpenCount
			err := r.Scan(&c.Rule, &c.Severity, &c.Open)
			out = append(out, c)
			return err
		})
	return out, err
}

// recordRun adds a run and its stages to the ledger; open is nil when the
// open breaks are not known (the run did not get to count them).
func (l Ledger) recordRun(ctx context.Context, info output.RunInfo, stages []stage, open *int64, archive string, finished time.Time) error {
	tx, err := l.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		info.ID, info.Window.From, info.Window.To, info.AsOf, info.StartedAt, finished, info.Verdict,
		info.Reasons, open, archive, info.ToolVersion); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	for _, s := range stages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_stages VALUES (?, ?, ?, ?, ?)`,
			info.ID, s.name, s.start, s.end, s.rows); err != nil {
			return fmt.Errorf("record stage %s: %w", s.name, err)
		}
	}
	return tx.Commit()
}

// Has reports whether the ledger holds the run.
func (l Ledger) Has(ctx context.Context, runID string) (bool, error) {
	var n int
	err := l.DB.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE run_id = ?`, runID).Scan(&n)
	return n > 0, err
}

// LastComplete is the last day a complete run covered (zero if none).
func (l Ledger) LastComplete(ctx context.Context) (time.Time, error) {
	var last sql.NullTime
	err := l.DB.QueryRowContext(ctx, `SELECT max(window_to) FROM runs WHERE verdict = ?`, output.Complete).Scan(&last)
	return last.Time, err
}

// LastSuccess is the end of the last complete run; ok is false if none.
func (l Ledger) LastSuccess(ctx context.Context) (at time.Time, ok bool, err error) {
	var last sql.NullTime
	err = l.DB.QueryRowContext(ctx, `SELECT max(finished_at) FROM runs WHERE verdict = ?`, output.Complete).Scan(&last)
	return last.Time, last.Valid, err
}

// StageDurations are the durations of the run's stages, by name.
func (l Ledger) StageDurations(ctx context.Context, runID string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	err := l.each(ctx, `SELECT stage, started_at, finished_at FROM run_stages WHERE run_id = ?`, []any{runID},
		func(r *sql.Rows) error {
			var stage string
			var start, end time.Time
			err := r.Scan(&stage, &start, &end)
			out[stage] = end.Sub(start)
			return err
		})
	return out, err
}

// ArchivePending lists the runs whose archive is unfinished (an archive
// reason: ArchiveRun completes them).
func (l Ledger) ArchivePending(ctx context.Context) ([]string, error) {
	var ids []string
	err := l.each(ctx, `SELECT run_id FROM runs WHERE len(list_filter(reasons, lambda r: starts_with(r, $prefix))) > 0`,
		[]any{sql.Named("prefix", archiveReasonPrefix)}, func(r *sql.Rows) error {
			var id string
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
	return ids, err
}

// markArchived records the run's archive: its URL set, its archive reason
// dropped, complete when no other reason is left.
func (l Ledger) markArchived(ctx context.Context, runID, url string) error {
	_, err := l.DB.ExecContext(ctx, `UPDATE runs SET archive_url = $url,
			reasons = list_filter(reasons, lambda r: NOT starts_with(r, $prefix)),
			verdict = CASE WHEN len(list_filter(reasons, lambda r: NOT starts_with(r, $prefix))) = 0
				THEN 'complete' ELSE verdict END
		WHERE run_id = $run_id`,
		sql.Named("url", url), sql.Named("prefix", archiveReasonPrefix), sql.Named("run_id", runID))
	return err
}

// markUnarchived records a run published as archived whose archive failed
// after all: incomplete, with reason, no archive URL.
func (l Ledger) markUnarchived(ctx context.Context, runID, reason string) error {
	_, err := l.DB.ExecContext(ctx, `UPDATE runs SET archive_url = '', verdict = $incomplete,
			reasons = list_append(coalesce(reasons, []), $reason) WHERE run_id = $run_id`,
		sql.Named("incomplete", output.Incomplete), sql.Named("reason", reason), sql.Named("run_id", runID))
	return err
}

func (l Ledger) each(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	r, err := l.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Next() {
		if err := fn(r); err != nil {
			return err
		}
	}
	return r.Err()
}

// readLedger runs fn on the ledger of the published file db, opened
// read-only; with no file yet it does nothing and returns false.
func readLedger(db string, fn func(Ledger) error) (bool, error) {
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	conn, err := OpenPublished(db)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	return true, fn(Ledger{conn.DB})
}

// updateLedger runs fn on the ledger of a working copy of the published
// file db, like a run, and publishes it.
func updateLedger(ctx context.Context, db string, fn func(Ledger) error) error {
	wh, err := OpenWarehouse(ctx, db)
	if err != nil {
		return err
	}
	if err := fn(Ledger{wh.DB}); err != nil {
		wh.Discard()
		return err
	}
	if err := wh.Publish(ctx); err != nil {
		wh.Discard()
		return err
	}
	return nil
}

// LastComplete returns the last day covered by a complete run in the
// published file db, or zero when there is none (or no file yet).
func LastComplete(ctx context.Context, db string) (time.Time, error) {
	var last time.Time
	_, err := readLedger(db, func(l Ledger) (err error) {
		if last, err = l.LastComplete(ctx); err != nil {
			return fmt.Errorf("read the run ledger of %s: %w", db, err)
		}
		return nil
	})
	return last, err
}
