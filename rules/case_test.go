package rules_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"recon/extract/raw"
	"recon/rules"
	reconsql "recon/sql"
)

var update = flag.Bool("update", false, "rewrite the want.csv files of testdata/rules")

const casesDir = "../testdata/rules"

// caseConfig is a case's case.json; every field is optional.
type caseConfig struct {
	Window   *raw.Window       `json:"window"`   // default 2026-10-01..2026-10-01
	AsOf     *time.Time        `json:"as_of"`    // default 2026-10-05T00:00:00Z
	Accounts []string          `json:"accounts"` // default acme_usd and acme_eur
	Params   map[string]string `json:"params"`   // parameter -> value, for the case's rule
}

func (c caseConfig) run(rule string) rules.Run {
	run := rules.Run{ID: "r-case", Window: raw.Window{From: day(0), To: day(0)},
		AsOf: day(4), Accounts: []string{"acme_usd@rn.us.ny.acme", "acme_eur@rn.us.ny.acme"}, Params: map[string]string{}}
	if c.Window != nil {
		run.Window = *c.Window
	}
	if c.AsOf != nil {
		run.AsOf = *c.AsOf
	}
	if c.Accounts != nil {
		run.Accounts = c.Accounts
	}
	for k, v := range c.Params {
		run.Params[rule+"."+k] = v
	}
	return run
}

// day is 2026-10-01 plus n days.
func day(n int) time.Time { return time.Date(2026, 10, 1+n, 0, 0, 0, 0, time.UTC) }

// TestGoldenRuleCases runs every case folder testdata/rules/<rule_id>/<case>/:
// the tables given as <table>.csv, the rule alone under case.json's run, and
// the breaks and pending items it leaves compared with want.csv. Every rule
// must have a case where it fires and one where it must not.
func TestGoldenRuleCases(t *testing.T) {
	catalogue, err := rules.Load(rules.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]rules.Rule{}
	for _, r := range catalogue {
		byID[r.ID] = r
	}
	dirs, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, d := range dirs {
		r, ok := byID[d.Name()]
		if !ok {
			t.Errorf("%s/%s: no rule of that id", casesDir, d.Name())
			continue
		}
		cases, err := os.ReadDir(filepath.Join(casesDir, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			dir := filepath.Join(casesDir, d.Name(), c.Name())
			// Whether the case fires is read from want.csv, which the case checks.
			if want, err := os.ReadFile(filepath.Join(dir, "want.csv")); err == nil && strings.Contains(string(want), "\nbreak,") {
				fires[r.ID] = true
			} else {
				quiet[r.ID] = true
			}
			t.Run(d.Name()+"/"+c.Name(), func(t *testing.T) {
				t.Parallel()
				golden(t, filepath.Join(dir, "want.csv"), runCase(t, dir, r))
			})
		}
	}
	for _, r := range catalogue {
		if !fires[r.ID] || !quiet[r.ID] {
			t.Errorf("rule %s needs a case in %s/%s/ where it fires (%v) and one where it must not (%v)",
				r.ID, casesDir, r.ID, fires[r.ID], quiet[r.ID])
		}
	}
}

// runCase loads the case's tables, applies the rule and returns the breaks
// and pending items as CSV.
func runCase(t *testing.T, dir string, r rules.Rule) string {
	t.Helper()
	var cfg caseConfig
	if b, err := os.ReadFile(filepath.Join(dir, "case.json")); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("case.json: %v", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	db := newDB(t)
	loadFixtures(t, db, dir)
	if _, err := rules.Apply(t.Context(), db, []rules.Rule{r}, cfg.run(r.ID)); err != nil {
		t.Fatal(err)
	}
	return dump(t, db)
}

// newDB is a migrated warehouse in a temporary folder.
func newDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "case.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// loadFixtures inserts every <table>.csv of dir into its table, by column
// name; NOT NULL columns the file leaves out get a placeholder (source_line:
// the line of the row in the file). The columns the loader derives and the
// file leaves out are derived as for rows loaded before them (sql.Derive).
func loadFixtures(t *testing.T, db *sql.DB, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	for _, f := range files {
		table := strings.TrimSuffix(filepath.Base(f), ".csv")
		if table == "want" {
			continue
		}
		insertCSV(t, db, table, f)
	}
	if err := reconsql.Derive(t.Context(), db); err != nil {
		t.Fatal(err)
	}
}

func insertCSV(t *testing.T, db *sql.DB, table, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	header, err := csv.NewReader(bytes.NewReader(b)).Read()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	rows, err := db.Query(`SELECT column_name, data_type FROM information_schema.columns
		WHERE table_name = ? AND is_nullable = 'NO' ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			t.Fatal(err)
		}
		switch {
		case slices.Contains(header, col):
		case col == "source_line":
			extra = append(extra, "row_number() OVER () + 1 AS source_line")
		case typ == "VARCHAR":
			extra = append(extra, fmt.Sprintf("'%s' AS %s", filepath.Base(file), col))
		default:
			extra = append(extra, "0 AS "+col)
		}
	}
	rows.Close()
	q := fmt.Sprintf(`INSERT INTO %q BY NAME SELECT *%s FROM read_csv(?, header = true, all_varchar = true)`,
		table, strings.Join(append([]string{""}, extra...), ", "))
	if _, err := db.Exec(q, file); err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
}

// dump returns the breaks and pending items, in a fixed order, as CSV.
func dump(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`
		SELECT 'break', break_key, severity, status, CAST(event_date AS VARCHAR), NULL, payment_id, end_to_end_id, account,
			currency, CAST(expected AS VARCHAR), CAST(actual AS VARCHAR), CAST(difference AS VARCHAR), detail, left_source, right_source
		FROM breaks
		UNION ALL
		SELECT 'pending', break_key, severity, NULL, CAST(event_date AS VARCHAR), strftime(due_at, '%Y-%m-%dT%H:%M:%S.%gZ'), payment_id,
			end_to_end_id, account, currency, CAST(expected AS VARCHAR), CAST(actual AS VARCHAR), CAST(difference AS VARCHAR),
			detail, left_source, right_source
		FROM pending_items
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	cols := []string{"kind", "break_key", "severity", "status", "event_date", "due_at", "payment_id", "end_to_end_id",
		"account", "currency", "expected", "actual", "difference", "detail", "left_source", "right_source"}
	w.Write(cols)
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		rec := make([]string, len(cols))
		for i, v := range vals {
			rec[i] = v.String
			if i >= 10 && i <= 12 && v.Valid {
				rec[i] = decimal.RequireFromString(v.String).String()
			}
		}
		w.Write(rec)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return buf.String()
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rules/ -run Golden -update to write it, then review it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// apply runs rules on db and fails the test on error.
func apply(t *testing.T, db *sql.DB, rs []rules.Rule, run rules.Run) rules.Result {
	t.Helper()
	res, err := rules.Apply(context.Background(), db, rs, run)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
