package rules

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"recon/extract/raw"
	reconsql "recon/sql"
)

// Columns are what a rule's SELECT may return. break_key (unique within the
// rule) and event_at (inside the run's window; its UTC day is the break's
// day) are required. due_at is when an unmatched item stops being pending:
// a row with due_at after the run's as_of goes to pending_items, not to
// breaks. severity, when not null, overrides the rule's severity for the row.
// sweep, when true, marks a row found in a sweep of everything rather than
// of the window (payment_stale's label sweep): its break or pending item is
// resolved by any later run that does not find it, whatever its day, unless
// the rule is held in that run.
var Columns = []string{"break_key", "event_at", "due_at", "severity", "payment_id", "end_to_end_id", "account",
	"currency", "expected", "actual", "difference", "detail", "left_source", "right_source", "sweep"}

const foundTable = `CREATE OR REPLACE TEMP TABLE found (
	break_id VARCHAR, rule_id VARCHAR, severity VARCHAR, break_key VARCHAR, event_at TIMESTAMPTZ, due_at TIMESTAMPTZ,
	payment_id VARCHAR, end_to_end_id VARCHAR, account VARCHAR, currency VARCHAR,
	expected DECIMAL(38,12), actual DECIMAL(38,12), difference DECIMAL(38,12),
	detail VARCHAR, left_source VARCHAR, right_source VARCHAR, sweep BOOLEAN,
	escalate_amount DECIMAL(38,12), escalate_after_days BIGINT, escalate_acknowledged_after_days BIGINT)`

// amountText is the one DuckDB-only helper rules may call: a decimal as
// exact text without trailing zeros (1.500000000000 -> 1.5).
const amountText = `CREATE OR REPLACE TEMP MACRO amount_text(x) AS
	rtrim(rtrim(CAST(CAST(x AS DECIMAL(38,12)) AS VARCHAR), '0'), '.')`

// Run is what one reconciliation run judges.
type Run struct {
	ID       string
	Window   raw.Window
	AsOf     time.Time
	Accounts []string          // this node's account@address list
	Params   map[string]string // overrides of rule parameters, "rule_id.param" -> value
	Gaps     []Gap             // tables whose source failed for part of the window
}

// Gap is a window of days for which a table's source failed (a FAILED
// report, a statement that could not be pulled): its rows there are missing
// or stale, so rules reading it cannot be trusted there.
type Gap struct {
	Table  string
	Window raw.Window
	Quiet  bool // the source is not configured: the rules are held, but the run is not incomplete for it
}

// Hold is a rule held on the days around a gap of a table it reads: there it
// adds no break and resolves none, and its open breaks stay as they were.
// The gap is widened by a day on each side, because rules match rows across
// midnight (a payment quoted before it executes after it).
type Hold struct {
	Rule   string
	Table  string
	Window raw.Window
	Quiet  bool // from a quiet Gap
}

// Result says what a run of the rules did.
type Result struct {
	Found    map[string]int64         // breaks found, by rule id
	Pending  map[string]int64         // items inside their grace period, by rule id
	Took     map[string]time.Duration // time of each rule's query
	Resolved int64
	Held     []Hold
}

// memoryLimit is DuckDB's memory limit while the rules run.
var memoryLimit = reconsql.RulesMemoryLimit

// Apply validates every rule against the database and the run (parameter
// values, declared tables, returned columns), then runs them and merges what
// they find: into breaks (new, persisting, resolved; stable break_id;
// ageing and severity escalation) and into pending_items. Nothing runs when
// a rule is invalid. DuckDB's memory limit is reconsql.RulesMemoryLimit
// meanwhile: the largest joins spill below it.
func Apply(ctx context.Context, db *sql.DB, rules []Rule, run Run) (Result, error) {
	res := Result{Found: map[string]int64{}, Pending: map[string]int64{}, Took: map[string]time.Duration{}}
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	err = reconsql.WithMemoryLimit(ctx, conn, memoryLimit, func() error {
		return applyOn(ctx, conn, rules, run, &res)
	})
	return res, err
}

// applyOn is Apply on conn, filling res.
func applyOn(ctx context.Context, conn *sql.Conn, rules []Rule, run Run, res *Result) error {
	for _, q := range []string{`SET TimeZone = 'UTC'`, foundTable, amountText,
		`CREATE OR REPLACE TEMP TABLE node_accounts (account VARCHAR PRIMARY KEY)`,
		`CREATE OR REPLACE TEMP TABLE held (rule_id VARCHAR, day_from DATE, day_to DATE)`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("prepare rules: %w", err)
		}
	}
	for _, a := range run.Accounts {
		if _, err := conn.ExecContext(ctx, `INSERT OR IGNORE INTO node_accounts VALUES (?)`, a); err != nil {
			return fmt.Errorf("node accounts: %w", err)
		}
	}
	plans, err := check(ctx, conn, rules, run)
	if err != nil {
		return err
	}
	for _, p := range plans {
		for _, h := range p.holds {
			if _, err := conn.ExecContext(ctx, `INSERT INTO held VALUES (?, ?, ?)`, h.Rule, h.Window.From, h.Window.To); err != nil {
				return fmt.Errorf("hold rule %s: %w", h.Rule, err)
			}
			res.Held = append(res.Held, h)
		}
	}
	for _, p := range plans {
		start := time.Now()
		if err := p.apply(ctx, conn, run); err != nil {
			return err
		}
		res.Took[p.rule.ID] = time.Since(start)
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM found f WHERE EXISTS (SELECT 1 FROM held h
		WHERE h.rule_id = f.rule_id AND CAST(f.event_at AS DATE) BETWEEN h.day_from AND h.day_to)`); err != nil {
		return fmt.Errorf("drop held breaks: %w", err)
	}
	if err := count(ctx, conn, run, res); err != nil {
		return err
	}
	res.Resolved, err = merge(ctx, conn, rules, run)
	return err
}

// count fills res.Found and res.Pending from found.
func count(ctx context.Context, conn *sql.Conn, run Run, res *Result) error {
	rows, err := conn.QueryContext(ctx, `SELECT rule_id, coalesce(due_at > $as_of, false), count(*) FROM found GROUP BY ALL`,
		sql.Named("as_of", run.AsOf))
	if err != nil {
		return fmt.Errorf("count breaks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var pending bool
		var n int64
		if err := rows.Scan(&id, &pending, &n); err != nil {
			return err
		}
		if pending {
			res.Pending[id] += n
		} else {
			res.Found[id] += n
		}
	}
	return rows.Err()
}

// plan is a checked rule with its bound arguments.
type plan struct {
	rule  Rule
	bound []any // the names the runner binds, and rule_id
	args  []any // bound, then the rule's parameters
	holds []Hold
}

var (
	literal = regexp.MustCompile(`'(?:[^']|'')*'`)
	word    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// check validates every rule before any runs and returns every problem.
func check(ctx context.Context, conn *sql.Conn, rules []Rule, run Run) ([]plan, error) {
	var errs []error
	known := map[string]bool{}
	rows, err := conn.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_catalog = current_database() AND table_schema = 'main'`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		known[t] = true
	}
	rows.Close()
	for _, g := range run.Gaps {
		if !known[g.Table] {
			errs = append(errs, fmt.Errorf("gap in unknown table %q", g.Table))
		}
	}
	overrides := maps.Clone(run.Params)
	plans := make([]plan, 0, len(rules))
	for _, r := range rules {
		p := plan{rule: r, bound: []any{
			sql.Named("window_start", run.Window.Start()), sql.Named("window_end", run.Window.End()),
			sql.Named("as_of", run.AsOf), sql.Named("run_id", run.ID), sql.Named("rule_id", r.ID),
		}}
		p.args = slices.Clone(p.bound)
		for _, prm := range r.Params {
			v := prm.Default
			if o, ok := overrides[r.ID+"."+prm.Name]; ok {
				v = o
				delete(overrides, r.ID+"."+prm.Name)
			}
			if !slices.Contains(ParamTypes, prm.Type) {
				errs = append(errs, fmt.Errorf("%s: param %s: type %q is not one of %v", r.File, prm.Name, prm.Type, ParamTypes))
				continue
			}
			var ok bool
			// The type comes from the list ParamTypes; the value is bound.
			if err := conn.QueryRowContext(ctx, `SELECT TRY_CAST(CAST($v AS VARCHAR) AS `+prm.Type+`) IS NOT NULL`,
				sql.Named("v", v)).Scan(&ok); err != nil || !ok {
				errs = append(errs, fmt.Errorf("%s: param %s = %q is not a %s", r.File, prm.Name, v, prm.Type))
			}
			p.args = append(p.args, sql.Named(prm.Name, v))
		}
		errs = append(errs, checkReads(r, known)...)
		errs = append(errs, checkColumns(ctx, conn, p))
		for _, g := range run.Gaps {
			if slices.Contains(r.Reads, g.Table) {
				p.holds = append(p.holds, Hold{Rule: r.ID, Table: g.Table, Quiet: g.Quiet,
					Window: raw.Window{From: g.Window.From.AddDate(0, 0, -1), To: g.Window.To.AddDate(0, 0, 1)}})
			}
		}
		plans = append(plans, p)
	}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		errs = append(errs, fmt.Errorf("parameter override %q names no parameter of a loaded rule (want rule_id.param)", k))
	}
	return plans, errors.Join(errs...)
}

// checkReads checks that the rule declares exactly the warehouse tables its SQL names.
func checkReads(r Rule, known map[string]bool) []error {
	var errs []error
	for _, t := range r.Reads {
		if !known[t] {
			errs = append(errs, fmt.Errorf("%s: reads: no table or view %q in the warehouse", r.File, t))
		}
	}
	named := map[string]bool{}
	for i, l := range strings.Split(r.SQL, "\n") {
		if c := literal.ReplaceAllString(code(l), "''"); c != "" {
			for _, w := range word.FindAllString(c, -1) {
				if w = strings.ToLower(w); known[w] && !slices.Contains(r.Reads, w) && !named[w] {
					named[w] = true
					errs = append(errs, fmt.Errorf("%s:%d: reads table %q without declaring it (add it to -- reads:)", r.File, i+1, w))
				}
			}
		}
	}
	return errs
}

// checkColumns plans the rule's query without rows and checks what it returns.
func checkColumns(ctx context.Context, conn *sql.Conn, p plan) error {
	rows, err := conn.QueryContext(ctx, "SELECT * FROM (\n"+p.rule.SQL+"\n) LIMIT 0", p.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", p.rule.File, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("%s: %w", p.rule.File, err)
	}
	var errs []error
	for _, c := range cols {
		if !slices.Contains(Columns, c) {
			errs = append(errs, fmt.Errorf("%s: returns column %q (allowed: %s)", p.rule.File, c, strings.Join(Columns, ", ")))
		}
	}
	for _, need := range []string{"break_key", "event_at"} {
		if !slices.Contains(cols, need) {
			errs = append(errs, fmt.Errorf("%s: must return column %q", p.rule.File, need))
		}
	}
	return errors.Join(errs...)
}

// apply runs one rule into found and checks what it returned.
func (p plan) apply(ctx context.Context, conn *sql.Conn, run Run) error {
	r := p.rule
	q := `INSERT INTO found BY NAME SELECT *, substr(sha256($rule_id || ':' || break_key), 1, 16) AS break_id,
		$rule_id AS rule_id, CAST($escalate_amount AS DECIMAL(38,12)) AS escalate_amount,
		CAST($escalate_after_days AS BIGINT) AS escalate_after_days,
		CAST($escalate_acknowledged_after_days AS BIGINT) AS escalate_acknowledged_after_days FROM (
` + r.SQL + "\n)"
	if _, err := conn.ExecContext(ctx, q, p.args...); err != nil {
		return fmt.Errorf("rule %s (%s): %w", r.ID, r.File, err)
	}
	var noKey, dupKey, outside, badSev int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE break_key IS NULL),
			count(break_key) - count(DISTINCT break_key),
			count(*) FILTER (WHERE event_at IS NULL OR event_at < $window_start OR event_at >= $window_end),
			count(*) FILTER (WHERE severity NOT IN ('P1', 'P2', 'P3', 'P4'))
		FROM found WHERE rule_id = $rule_id`, p.bound...).Scan(&noKey, &dupKey, &outside, &badSev); err != nil {
		return fmt.Errorf("rule %s: check rows: %w", r.ID, err)
	}
	var errs []error
	for _, c := range []struct {
		n    int64
		what string
	}{{noKey, "rows without break_key"}, {dupKey, "repeated break_key values"}, {outside, "rows whose event_at is null or outside the window " + run.Window.String()}, {badSev, "rows with a severity other than P1..P4"}} {
		if c.n > 0 {
			errs = append(errs, fmt.Errorf("rule %s (%s): %d %s", r.ID, r.File, c.n, c.what))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `UPDATE found SET severity = coalesce(severity, $severity),
			difference = coalesce(difference, coalesce(actual, 0) - coalesce(expected, 0))
		WHERE rule_id = $rule_id`, sql.Named("severity", r.Severity), sql.Named("rule_id", r.ID)); err != nil {
		return fmt.Errorf("rule %s: defaults: %w", r.ID, err)
	}
	return nil
}

// ageSQL is the whole days from first_seen_at to $as_of, and bucketSQL its ageing bucket.
const (
	ageSQL    = `CAST((epoch_ms($as_of) - epoch_ms(first_seen_at)) // 86400000 AS INTEGER)`
	bucketSQL = `CASE WHEN %[1]s <= 1 THEN '0-1' WHEN %[1]s <= 7 THEN '2-7' WHEN %[1]s <= 30 THEN '8-30' ELSE '>30' END`
)

// notHeld is true for a row of b whose day no hold covers.
const notHeld = `NOT EXISTS (SELECT 1 FROM held h WHERE h.rule_id = b.rule_id AND b.event_date BETWEEN h.day_from AND h.day_to)`

// judged is true for a row of b this run judged: its day is in the window
// and not held, or it came from a sweep and its rule is not held at all.
const judged = `((b.event_date BETWEEN $from AND $to AND ` + notHeld + `)
	OR (coalesce(b.sweep, false) AND NOT EXISTS (SELECT 1 FROM held h WHERE h.rule_id = b.rule_id)))`

// merge folds found into pending_items and breaks inside one transaction and
// returns the number of breaks resolved.
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
		sql.Named("from", run.Window.From), sql.Named("to", run.Window.To), sql.Named("rules", ids)}
	steps := []struct{ name, q string }{
		{"clear pending items", `DELETE FROM pending_items b WHERE list_contains($rules, b.rule_id) AND ` + judged},
		// Deletes and inserts, not INSERT OR REPLACE, ON CONFLICT or UPDATE:
		// DuckDB holds an upsert's or an update's changes pinned until the
		// commit, and the 955,000 breaks of a 1M day without its statements
		// ran out of its 512 MB that way; deletes and inserts pass.
		{"drop pending items found again", `DELETE FROM pending_items WHERE break_id IN (SELECT break_id FROM found WHERE due_at > $as_of)`},
		{"record pending items", `INSERT INTO pending_items BY NAME
			SELECT break_id, rule_id, severity, break_key, CAST(event_at AS DATE) AS event_date, due_at, payment_id,
				end_to_end_id, account, currency, expected, actual, difference, detail, left_source, right_source,
				coalesce(sweep, false) AS sweep, $run_id AS run_id, $as_of AS as_of
			FROM found WHERE due_at > $as_of`},
		{"merge breaks", mergedSQL},
		{"replace merged breaks", `DELETE FROM breaks WHERE break_id IN (SELECT break_id FROM merged)`},
		{"record merged breaks", `INSERT INTO breaks BY NAME SELECT * EXCLUDE (resolving) FROM merged`},
	}
	for _, s := range steps {
		if _, err := tx.ExecContext(ctx, s.q, args...); err != nil {
			return 0, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	var resolved int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE resolving) FROM merged`).Scan(&resolved); err != nil {
		return 0, fmt.Errorf("count resolved breaks: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE merged`); err != nil {
		return 0, err
	}
	if _, err := reopenChanged(ctx, tx, run); err != nil {
		return 0, err
	}
	return resolved, tx.Commit()
}

// mergedSQL creates the temporary table merged: the new rows of every
// break this run changes (resolving: those it resolves), which replace
// them in breaks. A break found (and due) is new, seen again (persisting),
// or new again after it was resolved (first seen now); it takes the
// found row's fields, its age and ageing bucket from first_seen_at, and
// its severity raised one level when its difference passes the rule's
// escalate_amount or its age escalate_after_days (an acknowledged break:
// only past escalate_acknowledged_after_days). A break of a rule that ran
// not found on a day judged is resolved. For a break not yet in breaks,
// b.status <> 'resolved' is null: its CASEs take their ELSE. (Computed once
// in a LATERAL instead, it changed the plan, which then ran out of memory in
// TestManyBreaksMergeWithinTheMemoryLimit.)
var mergedSQL = `CREATE OR REPLACE TEMP TABLE merged AS
	WITH seen AS (
		SELECT f.break_id, f.rule_id, coalesce(b.break_key, f.break_key) AS break_key,
			coalesce(b.event_date, CAST(f.event_at AS DATE)) AS event_date,
			CASE WHEN b.status <> 'resolved' THEN 'persisting' ELSE 'new' END AS status,
			f.payment_id, f.end_to_end_id, f.account, f.currency, f.expected, f.actual, f.difference, f.detail,
			f.left_source, f.right_source, f.severity AS base_severity, coalesce(f.sweep, false) AS sweep,
			CASE WHEN b.status <> 'resolved' THEN b.first_seen_run ELSE $run_id END AS first_seen_run,
			CASE WHEN b.status <> 'resolved' THEN b.first_seen_at ELSE $as_of END AS first_seen_at,
			$run_id AS last_seen_run, CAST(NULL AS VARCHAR) AS resolved_run,
			f.escalate_amount, f.escalate_after_days, f.escalate_acknowledged_after_days
		FROM found f LEFT JOIN breaks b USING (break_id)
		WHERE f.due_at IS NULL OR f.due_at <= $as_of
	), aged AS (
		SELECT s.*, a.age,
			coalesce(abs(s.difference) > s.escalate_amount, false) AND y.escalates AS by_amount,
			a.age > s.escalate_after_days AND y.escalates AS by_age
		FROM seen s LEFT JOIN break_workflow w USING (break_id),
			LATERAL (SELECT ` + ageSQL + ` AS age) a,
			LATERAL (SELECT w.workflow_status IS DISTINCT FROM 'acknowledged'
				OR a.age > s.escalate_acknowledged_after_days AS escalates) y
	)
	SELECT break_id, rule_id, break_key, event_date, status, payment_id, end_to_end_id, account, currency, expected,
		actual, difference, detail, left_source, right_source, base_severity, sweep, first_seen_run, first_seen_at,
		last_seen_run, resolved_run, age AS age_days, ` + fmt.Sprintf(bucketSQL, "age") + ` AS ageing_bucket,
		CASE WHEN by_amount AND by_age THEN 'amount, age' WHEN by_amount THEN 'amount' WHEN by_age THEN 'age' END AS escalation,
		CASE WHEN by_amount OR by_age THEN 'P' || greatest(1, CAST(substr(base_severity, 2) AS INTEGER) - 1)
			ELSE base_severity END AS severity,
		false AS resolving
	FROM aged
	UNION ALL BY NAME
	SELECT b.* REPLACE ('resolved' AS status, $run_id AS resolved_run, ` + ageSQL + ` AS age_days,
			` + fmt.Sprintf(bucketSQL, ageSQL) + ` AS ageing_bucket),
		true AS resolving
	FROM breaks b
	WHERE b.status <> 'resolved' AND list_contains($rules, b.rule_id)
		AND b.break_id NOT IN (SELECT break_id FROM found) AND ` + judged
