package rules

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"recon/extract"
)

// Columns are what a rule's SELECT may return; break_key and event_at are required.
const foundTable = `CREATE OR REPLACE TEMP TABLE found (
	rule_id VARCHAR, severity VARCHAR, break_key VARCHAR, event_at TIMESTAMPTZ,
	payment_id VARCHAR, end_to_end_id VARCHAR, account VARCHAR, currency VARCHAR,
	expected DECIMAL(38,12), actual DECIMAL(38,12), difference DECIMAL(38,12),
	detail VARCHAR, left_source VARCHAR, right_source VARCHAR)`

// Run is what one reconciliation run judges.
type Run struct {
	ID       string
	Window   extract.Window
	AsOf     time.Time
	Accounts []string          // this node's account@address list
	Params   map[string]string // overrides of rule parameters, "rule_id.param" -> value
}

// Result counts the breaks each rule found in this run.
type Result struct {
	Found    map[string]int64 // by rule id
	Resolved int64
}

// Apply runs every rule and merges what they find into breaks: a break found
// again stays (persisting), a new one is added, and an open break of a day
// inside the window that no rule finds any more becomes resolved.
func Apply(ctx context.Context, db *sql.DB, rules []Rule, run Run) (Result, error) {
	res := Result{Found: map[string]int64{}}
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	for _, q := range []string{foundTable, `CREATE OR REPLACE TEMP TABLE node_accounts (account VARCHAR PRIMARY KEY)`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return res, fmt.Errorf("prepare rules: %w", err)
		}
	}
	for _, a := range run.Accounts {
		if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO node_accounts VALUES (?)`, a); err != nil {
			return res, fmt.Errorf("node accounts: %w", err)
		}
	}
	for _, r := range rules {
		n, err := applyOne(ctx, conn, r, run)
		if err != nil {
			return res, err
		}
		res.Found[r.ID] = n
	}
	res.Resolved, err = merge(ctx, conn, rules, run)
	return res, err
}

func applyOne(ctx context.Context, conn *sql.Conn, r Rule, run Run) (int64, error) {
	args := []any{
		sql.Named("window_start", run.Window.Start()), sql.Named("window_end", run.Window.End()),
		sql.Named("as_of", run.AsOf), sql.Named("run_id", run.ID),
		sql.Named("rule_id", r.ID), sql.Named("severity", r.Severity),
	}
	for _, p := range r.Params {
		v := p.Default
		if o, ok := run.Params[r.ID+"."+p.Name]; ok {
			v = o
		}
		args = append(args, sql.Named(p.Name, v))
	}
	q := fmt.Sprintf("INSERT INTO found BY NAME SELECT $rule_id AS rule_id, $severity AS severity, * FROM (\n%s\n)", r.SQL)
	res, err := conn.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("rule %s (%s): %w", r.ID, r.File, err)
	}
	n, _ := res.RowsAffected()
	var dupKey sql.NullString
	if err := conn.QueryRowContext(ctx, `SELECT break_key FROM found WHERE rule_id = ?
		GROUP BY break_key HAVING count(*) > 1 OR break_key IS NULL LIMIT 1`, r.ID).Scan(&dupKey); err == nil {
		return 0, fmt.Errorf("rule %s (%s): break_key %q is null or returned twice", r.ID, r.File, dupKey.String)
	} else if err != sql.ErrNoRows {
		return 0, fmt.Errorf("rule %s: check keys: %w", r.ID, err)
	}
	return n, nil
}

// merge folds found into breaks inside one transaction.
func merge(ctx context.Context, conn *sql.Conn, rules []Rule, run Run) (int64, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	args := []any{sql.Named("run_id", run.ID), sql.Named("as_of", run.AsOf),
		sql.Named("from", run.Window.From), sql.Named("to", run.Window.To)}
	if _, err := tx.ExecContext(ctx, `INSERT INTO breaks BY NAME
		SELECT substr(sha256(rule_id || ':' || break_key), 1, 16) AS break_id, rule_id, severity,
			'new' AS status, break_key, CAST(event_at AS DATE) AS event_date, payment_id, end_to_end_id, account,
			currency, expected, actual, coalesce(difference, coalesce(actual, 0) - coalesce(expected, 0)) AS difference,
			detail, left_source, right_source, $run_id AS first_seen_run, $as_of AS first_seen_at,
			$run_id AS last_seen_run, NULL AS resolved_run, 0 AS age_days
		FROM found
		ON CONFLICT (break_id) DO UPDATE SET
			status = CASE WHEN breaks.status = 'resolved' THEN 'new' ELSE 'persisting' END,
			severity = excluded.severity, payment_id = excluded.payment_id, end_to_end_id = excluded.end_to_end_id,
			account = excluded.account, currency = excluded.currency, expected = excluded.expected,
			actual = excluded.actual, difference = excluded.difference, detail = excluded.detail,
			left_source = excluded.left_source, right_source = excluded.right_source,
			last_seen_run = excluded.last_seen_run, resolved_run = NULL,
			age_days = date_diff('day', breaks.first_seen_at, excluded.first_seen_at)`, args...); err != nil {
		return 0, fmt.Errorf("merge breaks: %w", err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE breaks SET status = 'resolved', resolved_run = $run_id,
			age_days = date_diff('day', first_seen_at, $as_of)
		WHERE status <> 'resolved' AND event_date BETWEEN $from AND $to
		  AND list_contains($rules, rule_id)
		  AND break_id NOT IN (SELECT substr(sha256(rule_id || ':' || break_key), 1, 16) FROM found)`,
		append(args, sql.Named("rules", ids))...)
	if err != nil {
		return 0, fmt.Errorf("resolve breaks: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, tx.Commit()
}
