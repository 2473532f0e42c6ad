package output

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract"
)

// RunInfo describes the run whose reports are written.
type RunInfo struct {
	ID          string           `json:"run_id"`
	Window      extract.Window   `json:"window"`
	AsOf        time.Time        `json:"as_of"`
	StartedAt   time.Time        `json:"started_at"`
	Verdict     string           `json:"verdict"` // complete or incomplete
	Reasons     []string         `json:"reasons"`
	ToolVersion string           `json:"tool_version"`
	Rules       []RuleRef        `json:"rules"`
	Rows        map[string]int64 `json:"rows_loaded"` // by source
	Quarantined int64            `json:"rows_quarantined"`
}

// RuleRef names a rule and the hash of its file.
type RuleRef struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
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
	Rows   *int64 `json:"rows,omitempty"` // data rows, for tabular files
}

// breakColumns is the fixed column order of breaks.csv.
var breakColumns = []string{"break_id", "rule_id", "severity", "status", "event_date", "payment_id",
	"end_to_end_id", "account", "currency", "expected", "actual", "difference", "detail",
	"left_source", "right_source", "first_seen_run", "age_days"}

// RunBreaksQuery selects the breaks a run reports: those of days in its
// window that are open, or that it resolved.
const RunBreaksQuery = `SELECT break_id, rule_id, severity, status, strftime(event_date, '%Y-%m-%d'), payment_id,
	end_to_end_id, account, currency, CAST(expected AS VARCHAR), CAST(actual AS VARCHAR), CAST(difference AS VARCHAR),
	detail, left_source, right_source, first_seen_run, CAST(age_days AS VARCHAR)
	FROM breaks
	WHERE event_date BETWEEN $from AND $to AND (status <> 'resolved' OR resolved_run = $run_id)
	ORDER BY rule_id, break_id`

// WriteReports writes breaks.csv and summary.json for the run into dir.
func WriteReports(ctx context.Context, db *sql.DB, run RunInfo, dir string) ([]File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n, err := writeBreaksCSV(ctx, db, run, filepath.Join(dir, "breaks.csv"))
	if err != nil {
		return nil, fmt.Errorf("write breaks.csv: %w", err)
	}
	if err := writeSummary(ctx, db, run, filepath.Join(dir, "summary.json")); err != nil {
		return nil, fmt.Errorf("write summary.json: %w", err)
	}
	csvFile, err := describe(dir, "breaks.csv")
	if err != nil {
		return nil, err
	}
	csvFile.Rows = &n
	sumFile, err := describe(dir, "summary.json")
	if err != nil {
		return nil, err
	}
	return []File{csvFile, sumFile}, nil
}

func runArgs(run RunInfo) []any {
	return []any{sql.Named("from", run.Window.From), sql.Named("to", run.Window.To), sql.Named("run_id", run.ID)}
}

func writeBreaksCSV(ctx context.Context, db *sql.DB, run RunInfo, path string) (int64, error) {
	rows, err := db.QueryContext(ctx, RunBreaksQuery, runArgs(run)...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.Write(breakColumns); err != nil {
		return 0, err
	}
	vals := make([]sql.NullString, len(breakColumns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(vals))
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			rec[i] = v.String
		}
		for _, i := range []int{9, 10, 11} { // amounts: shortest exact text
			if rec[i] != "" {
				rec[i] = decimal.RequireFromString(rec[i]).String()
			}
		}
		if err := w.Write(rec); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return n, err
	}
	return n, f.Close()
}

// Summary is summary.json.
type Summary struct {
	Run      RunInfo                     `json:"run"`
	Breaks   int64                       `json:"breaks"`
	ByRule   map[string]map[string]int64 `json:"by_rule"` // rule -> status -> count
	BySev    map[string]int64            `json:"open_by_severity"`
	Resolved int64                       `json:"resolved"`
}

func writeSummary(ctx context.Context, db *sql.DB, run RunInfo, path string) error {
	s := Summary{Run: run, ByRule: map[string]map[string]int64{}, BySev: map[string]int64{}}
	rows, err := db.QueryContext(ctx, `SELECT rule_id, severity, status, count(*) FROM (`+RunBreaksQuery+`)
		t(break_id, rule_id, severity, status) GROUP BY ALL ORDER BY ALL`, runArgs(run)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rule, sev, status string
		var n int64
		if err := rows.Scan(&rule, &sev, &status, &n); err != nil {
			return err
		}
		if s.ByRule[rule] == nil {
			s.ByRule[rule] = map[string]int64{}
		}
		s.ByRule[rule][status] += n
		s.Breaks += n
		if status == "resolved" {
			s.Resolved += n
		} else {
			s.BySev[sev] += n
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
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
