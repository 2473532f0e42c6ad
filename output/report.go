package output

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract/raw"
)

// RunInfo describes the run whose reports are written: everything replay
// needs besides the archived inputs (id, window, as-of, accounts, rule
// parameters), and the run's metadata.
type RunInfo struct {
	ID          string            `json:"run_id"`
	Window      raw.Window        `json:"window"`
	AsOf        time.Time         `json:"as_of"`
	StartedAt   time.Time         `json:"started_at"`
	Verdict     string            `json:"verdict"` // complete or incomplete
	Reasons     []string          `json:"reasons"`
	ToolVersion string            `json:"tool_version"`
	Rules       []RuleRef         `json:"rules"`
	Accounts    []string          `json:"accounts"`
	Params      map[string]string `json:"params"`      // rule parameter overrides, rule_id.param -> value
	Rows        map[string]int64  `json:"rows_loaded"` // by source
	Quarantined int64             `json:"rows_quarantined"`
	// Layout is the layout of the break files the run wrote (ReportLayout
	// for a new run); a replay writes the archived run's. Runs archived
	// before layouts were numbered have 0.
	Layout int `json:"report_layout,omitempty"`
}

// ReportLayout is the layout of the break files a run writes now: 2 adds
// workflow_status, last_reason and last_by to breaks.csv and
// breaks.parquet, and previous_workflow_status with them to changes.csv
// (the break workflow); before, the files ended at age_days and detail.
const ReportLayout = 2

// workflowColumns are the columns of the break files that layout 2 added.
const workflowColumns = `workflow_status, last_reason, last_by`

// normalised returns r with empty lists and maps instead of nil, so that
// summary.json and the manifest print [] and {} rather than null.
func (r RunInfo) normalised() RunInfo {
	if r.Reasons == nil {
		r.Reasons = []string{}
	}
	if r.Accounts == nil {
		r.Accounts = []string{}
	}
	if r.Params == nil {
		r.Params = map[string]string{}
	}
	if r.Rows == nil {
		r.Rows = map[string]int64{}
	}
	return r
}

// RuleRef names a rule, its severity and the sha256 of its file.
type RuleRef struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	SHA256   string `json:"sha256"`
}

// Verdicts.
const (
	Complete   = "complete"
	Incomplete = "incomplete"
)

// File is one archived file.
type File struct {
	Path   string `json:"path"` // relative to the run's folder
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Rows   *int64 `json:"rows,omitempty"` // data rows, for tabular files and raw pages
}

// Report files of a run. BreakFiles depend only on the run's inputs and are
// byte-identical when the run is replayed; the summaries also carry run
// metadata and the run ledger's history.
const (
	BreaksCSV     = "breaks.csv"
	BreaksParquet = "breaks.parquet"
	ChangesCSV    = "changes.csv"
	SummaryJSON   = "summary.json"
	SummaryHTML   = "summary.html"
)

// BreakFiles are the files replay recomputes and compares.
var BreakFiles = []string{BreaksCSV, BreaksParquet, ChangesCSV}

// amountColumns are printed in their shortest exact decimal form in CSV files.
var amountColumns = map[string]bool{"expected": true, "actual": true, "difference": true, "previous_difference": true,
	"difference_a": true, "difference_b": true}

// runBreaksTable holds the breaks a run reports: those of days in its window
// that are open, or that it resolved; fixed column order, in the order
// breaks.csv and breaks.parquet list them (inserted in order, read in
// insertion order: writeCSV checks that it is kept).
const runBreaksTable = `CREATE OR REPLACE TEMP TABLE run_breaks AS
	SELECT break_id, rule_id, severity, status, event_date, payment_id, end_to_end_id, account, currency,
		expected, actual, difference, detail, left_source, right_source, first_seen_run, age_days,
		coalesce(w.workflow_status, 'open') AS workflow_status, w.last_reason, w.last_by
	FROM breaks LEFT JOIN break_workflow w USING (break_id)
	WHERE event_date BETWEEN $from AND $to AND (status <> 'resolved' OR resolved_run = $run_id)
	ORDER BY rule_id, break_id`

// changesQuery compares each break of the window before the run (the state
// archived under inputs/state) with after it.
const changesQuery = `WITH before AS (SELECT * FROM read_parquet({{state}})),
	classified AS (
		SELECT CASE
				WHEN b.break_id IS NOT NULL AND b.status <> 'resolved' AND a.status = 'resolved' THEN 'resolved'
				WHEN b.break_id IS NOT NULL AND b.status <> 'resolved' THEN 'persisting'
				WHEN a.status <> 'resolved' THEN 'new'
			END AS change,
			a.*, b.status AS previous_status, b.difference AS previous_difference, b.last_seen_run AS previous_run,
			coalesce(bw.workflow_status, 'open') AS previous_workflow_status,
			coalesce(w.workflow_status, 'open') AS workflow_status, w.last_reason, w.last_by
		FROM breaks a LEFT JOIN before b USING (break_id) LEFT JOIN before_workflow bw USING (break_id)
			LEFT JOIN break_workflow w USING (break_id)
		WHERE a.event_date BETWEEN $from AND $to)
	SELECT change, break_id, rule_id, severity, strftime(event_date, '%Y-%m-%d') AS event_date, payment_id,
		account, currency, previous_status, status, CAST(previous_difference AS VARCHAR) AS previous_difference,
		CAST(difference AS VARCHAR) AS difference, previous_run, detail,
		previous_workflow_status, workflow_status, last_reason, last_by
	FROM classified
	WHERE change IS NOT NULL
	ORDER BY CASE change WHEN 'new' THEN 1 WHEN 'resolved' THEN 2 ELSE 3 END, rule_id, break_id`

// WriteReports writes the run's reports into dir: breaks.csv, breaks.parquet,
// changes.csv, summary.json and summary.html. The warehouse state the run
// started from must be under dir (SaveInputs). It returns the summary.
func WriteReports(ctx context.Context, db *sql.DB, run RunInfo, dir string) (Summary, error) {
	s, err := writeReports(ctx, db, run, dir)
	if err != nil {
		return s, fmt.Errorf("reports of %s: %w", run.ID, err)
	}
	return s, nil
}

func writeReports(ctx context.Context, db *sql.DB, run RunInfo, dir string) (Summary, error) {
	var s Summary
	conn, err := db.Conn(ctx)
	if err != nil {
		return s, err
	}
	defer conn.Close()
	args := []any{sql.Named("from", run.Window.From), sql.Named("to", run.Window.To), sql.Named("run_id", run.ID)}
	if _, err := conn.ExecContext(ctx, runBreaksTable, args...); err != nil {
		return s, fmt.Errorf("select the run's breaks: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS run_breaks`)
	all, changes := "*", changesQuery
	if run.Layout < 2 { // a run archived before the workflow columns: its layout, for replay
		all = "* EXCLUDE (" + workflowColumns + ")"
		changes = "SELECT * EXCLUDE (previous_workflow_status, " + workflowColumns + ") FROM (" + changesQuery + ")"
	}
	if _, err := writeCSV(ctx, conn, filepath.Join(dir, BreaksCSV), amountColumns,
		`SELECT `+all+` REPLACE (strftime(event_date, '%Y-%m-%d') AS event_date, CAST(expected AS VARCHAR) AS expected,
			CAST(actual AS VARCHAR) AS actual, CAST(difference AS VARCHAR) AS difference)
		FROM run_breaks`); err != nil {
		return s, fmt.Errorf("write %s: %w", BreaksCSV, err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`COPY (SELECT `+all+` FROM run_breaks)
		TO %s (FORMAT parquet, COMPRESSION zstd)`, sqlString(filepath.Join(dir, BreaksParquet)))); err != nil {
		return s, fmt.Errorf("write %s: %w", BreaksParquet, err)
	}
	state, err := stateList(dir, "breaks")
	if err != nil {
		return s, err
	}
	if err := beforeWorkflow(ctx, conn, dir); err != nil {
		return s, err
	}
	if _, err := writeCSV(ctx, conn, filepath.Join(dir, ChangesCSV), amountColumns,
		strings.Replace(changes, "{{state}}", state, 1), args...); err != nil {
		return s, fmt.Errorf("write %s: %w", ChangesCSV, err)
	}
	s, err = summarise(ctx, conn, run)
	if err != nil {
		return s, fmt.Errorf("summarise: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, err
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryJSON), append(b, '\n'), 0o644); err != nil {
		return s, fmt.Errorf("write %s: %w", SummaryJSON, err)
	}
	if err := writeHTML(ctx, conn, s, filepath.Join(dir, SummaryHTML)); err != nil {
		return s, fmt.Errorf("write %s: %w", SummaryHTML, err)
	}
	return s, nil
}

// ReadSummary reads summary.json from a run folder.
func ReadSummary(dir string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(filepath.Join(dir, SummaryJSON))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read %s: %w", filepath.Join(dir, SummaryJSON), err)
	}
	return s, nil
}

// Counts counts breaks by status and workflow status: New and Persisting
// count the unhandled ones (workflow open), Acknowledged the acknowledged
// ones; Open is New + Persisting + Acknowledged. Explained and written-off
// breaks are closed: not counted here but in the summary's Handled.
type Counts struct {
	Open         int64 `json:"open"`
	New          int64 `json:"new"`
	Persisting   int64 `json:"persisting"`
	Acknowledged int64 `json:"acknowledged"`
	Resolved     int64 `json:"resolved"`
}

func (c *Counts) add(status, workflow string, n int64) {
	switch {
	case status == "resolved":
		c.Resolved += n
	case workflow == "acknowledged":
		c.Acknowledged += n
	case workflow != "open": // closed by finance
	case status == "new":
		c.New += n
	case status == "persisting":
		c.Persisting += n
	}
	c.Open = c.New + c.Persisting + c.Acknowledged
}

// RuleCounts are the breaks one rule reported.
type RuleCounts struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Counts
}

// CurrencyTotal sums the differences of the open breaks in one currency.
type CurrencyTotal struct {
	Currency      string `json:"currency"`
	Open          int64  `json:"open"`
	NetDifference string `json:"net_difference"`
	AbsDifference string `json:"abs_difference"`
}

// Bucket counts open breaks by days from their event day to the run's as-of.
type Bucket struct {
	Label   string `json:"label"`
	MinDays int    `json:"min_days"`
	MaxDays *int   `json:"max_days"` // inclusive; null for the last bucket
	Open    int64  `json:"open"`
}

// Quarantine counts the rows this run's loads set aside.
type Quarantine struct {
	Rows     int64            `json:"rows"`
	BySource map[string]int64 `json:"by_source"`
}

// UnknownValue counts the rows a run loaded with a value that recon does
// not know in a column with a list of values (table unknown_values).
type UnknownValue struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	Value  string `json:"value"`
	Rows   int64  `json:"rows"`
}

// Summary is summary.json: what the run reported, counted.
type Summary struct {
	Run        RunInfo           `json:"run"`
	Breaks     Counts            `json:"breaks"`
	ByRule     []RuleCounts      `json:"by_rule"`
	BySeverity map[string]Counts `json:"by_severity"`
	Currencies []CurrencyTotal   `json:"totals_by_currency"`
	Ageing     []Bucket          `json:"ageing"`
	Quarantine Quarantine        `json:"quarantine"`
	Unknown    []UnknownValue    `json:"unknown_values"`
	Handled    []Handled         `json:"handled"`
	// WalletLimitIssues are the wallet limits the rules cannot apply as
	// configured (view wallet_limit_issues): an unknown type, two initiator
	// matchers (invalid configuration), ...
	WalletLimitIssues []WalletLimitIssue `json:"wallet_limit_issues,omitempty"`
}

// WalletLimitIssue is one row of the view wallet_limit_issues.
type WalletLimitIssue struct {
	Wallet string `json:"wallet"` // vault_id/wallet_id
	Limit  string `json:"limit_id"`
	Issue  string `json:"issue"`
}

// ageing are the buckets of days outstanding, as [min, max] days.
var ageing = []struct {
	label    string
	min, max int // max -1: no upper bound
}{{"0-1 days", 0, 1}, {"2-3 days", 2, 3}, {"4-7 days", 4, 7}, {"8-30 days", 8, 30}, {"over 30 days", 31, -1}}

// summarise is summary.json: the run, its breaks' counts and totals, and
// the other findings of the run.
func summarise(ctx context.Context, conn *sql.Conn, run RunInfo) (Summary, error) {
	s := Summary{Run: run.normalised(), ByRule: []RuleCounts{}, BySeverity: map[string]Counts{}, Currencies: []CurrencyTotal{},
		Quarantine: Quarantine{BySource: map[string]int64{}}, Unknown: []UnknownValue{}}
	for _, part := range []func(context.Context, *sql.Conn, RunInfo, *Summary) error{summariseBreaks, summariseOpen, summariseFindings} {
		if err := part(ctx, conn, run, &s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// summariseBreaks counts the run's breaks by rule, severity, status and workflow.
func summariseBreaks(ctx context.Context, conn *sql.Conn, run RunInfo, s *Summary) error {
	byRule := map[string]*RuleCounts{}
	for _, r := range run.Rules {
		byRule[r.ID] = &RuleCounts{Rule: r.ID, Severity: r.Severity}
	}
	err := query(ctx, conn, `SELECT rule_id, severity, status, workflow_status, count(*) FROM run_breaks GROUP BY ALL ORDER BY ALL`, nil,
		func(rows *sql.Rows) error {
			var rule, sev, status, workflow string
			var n int64
			if err := rows.Scan(&rule, &sev, &status, &workflow, &n); err != nil {
				return err
			}
			if byRule[rule] == nil { // a rule no longer in the catalogue
				byRule[rule] = &RuleCounts{Rule: rule, Severity: sev}
			}
			byRule[rule].add(status, workflow, n)
			c := s.BySeverity[sev]
			c.add(status, workflow, n)
			s.BySeverity[sev] = c
			s.Breaks.add(status, workflow, n)
			return nil
		})
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(byRule)) {
		s.ByRule = append(s.ByRule, *byRule[id])
	}
	return err
}

// summariseOpen totals the open breaks by currency and by age.
func summariseOpen(ctx context.Context, conn *sql.Conn, run RunInfo, s *Summary) error {
	err := query(ctx, conn, `SELECT coalesce(currency, ''), count(*), CAST(sum(difference) AS VARCHAR),
			CAST(sum(abs(difference)) AS VARCHAR)
		FROM run_breaks WHERE status <> 'resolved' AND `+openWorkflow+` GROUP BY ALL ORDER BY 1`, nil,
		func(rows *sql.Rows) error {
			var c CurrencyTotal
			var net, abs sql.NullString
			if err := rows.Scan(&c.Currency, &c.Open, &net, &abs); err != nil {
				return err
			}
			c.NetDifference, c.AbsDifference = decimalText(net), decimalText(abs)
			s.Currencies = append(s.Currencies, c)
			return nil
		})
	if err != nil {
		return err
	}
	for _, b := range ageing {
		bk := Bucket{Label: b.label, MinDays: b.min}
		if b.max >= 0 {
			bk.MaxDays = &b.max
		}
		s.Ageing = append(s.Ageing, bk)
	}
	err = query(ctx, conn, `SELECT date_diff('day', event_date, CAST($as_of AS DATE)) AS days, count(*)
		FROM run_breaks WHERE status <> 'resolved' AND `+openWorkflow+` GROUP BY ALL`, []any{sql.Named("as_of", run.AsOf.UTC().Format(raw.DateLayout))},
		func(rows *sql.Rows) error {
			var days int
			var n int64
			if err := rows.Scan(&days, &n); err != nil {
				return err
			}
			for i, b := range ageing {
				if days <= b.max || b.max < 0 {
					s.Ageing[i].Open += n
					break
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	return err
}

// summariseFindings adds what finance handled, the quarantined rows, the unknown values and the wallet limits the rules cannot apply.
func summariseFindings(ctx context.Context, conn *sql.Conn, run RunInfo, s *Summary) error {
	var err error
	if s.Handled, err = handled(ctx, conn); err != nil {
		return err
	}
	err = query(ctx, conn, `SELECT source, count(*) FROM quarantine WHERE run_id = $run_id GROUP BY ALL`,
		[]any{sql.Named("run_id", run.ID)}, func(rows *sql.Rows) error {
			var src string
			var n int64
			if err := rows.Scan(&src, &n); err != nil {
				return err
			}
			s.Quarantine.BySource[src] = n
			s.Quarantine.Rows += n
			return nil
		})
	if err != nil {
		return err
	}
	err = query(ctx, conn, `SELECT table_name, column_name, value, rows FROM unknown_values WHERE run_id = $run_id
		ORDER BY table_name, column_name, value`, []any{sql.Named("run_id", run.ID)}, func(rows *sql.Rows) error {
		var u UnknownValue
		if err := rows.Scan(&u.Table, &u.Column, &u.Value, &u.Rows); err != nil {
			return err
		}
		s.Unknown = append(s.Unknown, u)
		return nil
	})
	if err != nil {
		return err
	}
	err = query(ctx, conn, `SELECT vault_id || '/' || wallet_id, limit_id, issue FROM wallet_limit_issues ORDER BY ALL`, nil,
		func(rows *sql.Rows) error {
			var i WalletLimitIssue
			if err := rows.Scan(&i.Wallet, &i.Limit, &i.Issue); err != nil {
				return err
			}
			s.WalletLimitIssues = append(s.WalletLimitIssues, i)
			return nil
		})
	return err
}

// querier is a *sql.DB or *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// query runs q and calls fn for each row.
func query(ctx context.Context, db querier, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// decimalText prints a DECIMAL's text in its shortest exact form ("0" for null).
func decimalText(s sql.NullString) string {
	if !s.Valid {
		return "0"
	}
	return decimal.RequireFromString(s.String).String()
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// describe returns the size and sha256 of dir/rel.
func describe(dir, rel string) (File, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("hash %s: %w", rel, err)
	}
	return File{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
