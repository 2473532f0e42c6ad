package output_test

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/output"
	reconsql "recon/sql"
)

func TestNeutralise(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"ACME202610010000001", "ACME202610010000001"},
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"@SUM(1+1)", "'@SUM(1+1)"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"-", "'-"},
		{"-1e3", "'-1e3"}, // a spreadsheet would compute it; not a plain decimal
		// Plain decimals are numbers to a spreadsheet, never formulas: kept.
		{"-12.50", "-12.50"},
		{"-44377", "-44377"},
		{"+5", "+5"},
		{"0.000001", "0.000001"},
	}
	for _, tt := range tests {
		if got := output.Neutralise(tt.in); got != tt.want {
			t.Errorf("Neutralise(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// newDB returns a migrated DuckDB file in a temporary folder.
func newDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "t.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestBreaksCSVNeutralisesFormulas writes breaks whose text fields came from
// hostile report rows, and reads breaks.csv back as a spreadsheet would.
func TestBreaksCSVNeutralisesFormulas(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	if _, err := output.SaveInputs(t.Context(), db, nil, dir, nil, false); err != nil {
		t.Fatal(err)
	}
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-01")
	asOf := time.Date(2026, 10, 3, 6, 0, 0, 0, time.UTC)
	run := output.RunInfo{ID: "r-1", Window: w, AsOf: asOf, StartedAt: asOf, Verdict: output.Complete,
		Rules: []output.RuleRef{{ID: "ops_missing_in_recon", Severity: "P2"}}}
	insert := `INSERT INTO breaks (break_id, rule_id, severity, status, break_key, event_date, payment_id, end_to_end_id,
		account, currency, expected, actual, difference, detail, left_source, first_seen_run, first_seen_at,
		last_seen_run, age_days) VALUES (?, 'ops_missing_in_recon', 'P2', 'new', ?, DATE '2026-10-01', ?, ?, ?, 'USD',
		?, NULL, ?, ?, 'PAYMENT_OPS r line 2', 'r-1', ?, 'r-1', 0)`
	rows := []struct{ id, payment, e2e, account, expected, difference, detail string }{
		{"b1", "p1", "=cmd|' /C calc'!A0", "acme@x", "12.50", "-12.50", "@SUM(1+1)*cmd|' /C calc'!A0"},
		{"b2", "+1+1", "\t=1+1", "-2+3", "0.000001", "-0.000001", "line one\nline \"two\", with comma"},
	}
	for _, r := range rows {
		if _, err := db.Exec(insert, r.id, r.id, r.payment, r.e2e, r.account, r.expected, r.difference, r.detail, asOf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := output.WriteReports(t.Context(), db, run, dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, output.BreaksCSV))
	if err != nil {
		t.Fatal(err)
	}
	// RFC 4180: every line ends in CRLF.
	if bytes.Count(raw, []byte("\n")) != bytes.Count(raw, []byte("\r\n")) {
		t.Errorf("breaks.csv has bare LF line ends:\n%q", raw)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want header and 2", len(recs))
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	want := []map[string]string{
		{"payment_id": "p1", "end_to_end_id": "'=cmd|' /C calc'!A0", "account": "acme@x", "expected": "12.5",
			"difference": "-12.5", "detail": "'@SUM(1+1)*cmd|' /C calc'!A0"},
		{"payment_id": "'+1+1", "end_to_end_id": "'\t=1+1", "account": "'-2+3", "expected": "0.000001",
			"difference": "-0.000001", "detail": "line one\nline \"two\", with comma"},
	}
	for i, w := range want {
		for name, v := range w {
			if got := recs[i+1][col[name]]; got != v {
				t.Errorf("row %d %s = %q, want %q", i+1, name, got, v)
			}
		}
	}
	for _, rec := range recs[1:] {
		for i, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && output.Neutralise(cell) != cell {
				t.Errorf("column %s: cell %q would run as a formula", recs[0][i], cell)
			}
		}
	}
	// changes.csv goes through the same writer.
	changes, _ := os.ReadFile(filepath.Join(dir, output.ChangesCSV))
	if !bytes.Contains(changes, []byte("'=cmd")) && !bytes.Contains(changes, []byte("'+1+1")) {
		t.Errorf("changes.csv is not neutralised:\n%s", changes)
	}
	// The typed Parquet file keeps the values as they are.
	var e2e, diff string
	if err := db.QueryRow(`SELECT end_to_end_id, CAST(difference AS VARCHAR) FROM read_parquet(?) WHERE break_id = 'b1'`,
		filepath.Join(dir, output.BreaksParquet)).Scan(&e2e, &diff); err != nil {
		t.Fatal(err)
	}
	if e2e != "=cmd|' /C calc'!A0" || diff != "-12.500000000000" {
		t.Errorf("parquet row b1: %q %q", e2e, diff)
	}
}

// TestReportLayouts: a run writes its break files in ReportLayout (with the
// workflow columns); a run archived before layouts were numbered (0) is
// written as it was, ending at age_days and detail, so its replay is
// byte-identical.
func TestReportLayouts(t *testing.T) {
	for _, tt := range []struct {
		layout         int
		breaks, change string // the last column of breaks.csv and of changes.csv
	}{
		{0, "age_days", "detail"},
		{output.ReportLayout, "last_by", "last_by"},
	} {
		db := newDB(t)
		dir := t.TempDir()
		if _, err := output.SaveInputs(t.Context(), db, nil, dir, nil, false); err != nil {
			t.Fatal(err)
		}
		w, _ := raw.ParseWindow("2026-10-01", "2026-10-01")
		asOf := time.Date(2026, 10, 3, 6, 0, 0, 0, time.UTC)
		run := output.RunInfo{ID: "r-1", Window: w, AsOf: asOf, StartedAt: asOf, Verdict: output.Complete, Layout: tt.layout}
		if _, err := db.Exec(`INSERT INTO breaks (break_id, rule_id, severity, status, break_key, event_date, currency,
			difference, first_seen_run, first_seen_at, last_seen_run, age_days)
			VALUES ('b1', 'ops_missing_in_recon', 'P2', 'new', 'k', DATE '2026-10-01', 'USD', 1, 'r-1', ?, 'r-1', 0)`, asOf); err != nil {
			t.Fatal(err)
		}
		if _, err := output.WriteReports(t.Context(), db, run, dir); err != nil {
			t.Fatal(err)
		}
		for name, last := range map[string]string{output.BreaksCSV: tt.breaks, output.ChangesCSV: tt.change} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(string(b), "\r\n")
			if cols := strings.Split(header, ","); cols[len(cols)-1] != last {
				t.Errorf("layout %d: %s header %q, want it to end at %s", tt.layout, name, header, last)
			}
		}
	}
}

// TestManyBreaksReportWithinTheMemoryLimit writes the reports of a night of
// 300,000 wide breaks at a DuckDB limit of 160 MB: breaks.csv,
// breaks.parquet and changes.csv each list every break, in order of rule
// and break id. Read as one result, the breaks took DuckDB past the limit.
func TestManyBreaksReportWithinTheMemoryLimit(t *testing.T) {
	const n = 300_000
	db := newDB(t)
	dir := t.TempDir()
	if _, err := output.SaveInputs(t.Context(), db, nil, dir, nil, false); err != nil {
		t.Fatal(err)
	}
	// Two rules, their breaks inserted out of order; the detail and sources
	// as long as fee_mismatch's.
	if _, err := db.Exec(`INSERT INTO breaks (break_id, rule_id, severity, status, break_key, event_date, payment_id,
		account, currency, actual, difference, detail, left_source, right_source, first_seen_run, first_seen_at,
		last_seen_run, age_days)
		SELECT substr(md5(i::VARCHAR), 1, 16), CASE WHEN i % 3 = 0 THEN 'fee_mismatch' ELSE 'ops_missing_in_recon' END, 'P2', 'new',
			md5(i::VARCHAR) || '|sender', DATE '2026-10-01', md5('p' || i), 'acme_usd@rn.us.ny.acme', 'USD', 12.34, 12.34,
			repeat('charged 12.34 USD, expected unknown as the sender ', 4) || i,
			'execution result ' || md5('r' || i) || ' (payments/since_2026-10-01_p' || (i // 100) || '.json #' || (i % 100) || ')',
			'fee configuration (fee_history)', 'r-1', TIMESTAMPTZ '2026-10-01 06:00:00+00', 'r-1', 0
		FROM range($1) t(i) ORDER BY md5('o' || i)`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SET memory_limit = '160MB'`); err != nil {
		t.Fatal(err)
	}
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-01")
	asOf := time.Date(2026, 10, 3, 6, 0, 0, 0, time.UTC)
	run := output.RunInfo{ID: "r-1", Window: w, AsOf: asOf, StartedAt: asOf, Verdict: output.Complete,
		Rules: []output.RuleRef{{ID: "fee_mismatch", Severity: "P2"}, {ID: "ops_missing_in_recon", Severity: "P2"}}}
	if _, err := output.WriteReports(t.Context(), db, run, dir); err != nil {
		t.Fatal(err)
	}
	sqlKeys := func(q string, args ...any) []string {
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	csvKeys := func(name string) []string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		var keys []string
		for _, r := range recs[1:] {
			keys = append(keys, r[col["rule_id"]]+" "+r[col["break_id"]])
		}
		return keys
	}
	want := sqlKeys(`SELECT rule_id || ' ' || break_id FROM breaks ORDER BY rule_id, break_id`)
	inParquet := sqlKeys(`SELECT rule_id || ' ' || break_id FROM read_parquet($1)`, filepath.Join(dir, output.BreaksParquet))
	for name, got := range map[string][]string{output.BreaksCSV: csvKeys(output.BreaksCSV),
		output.ChangesCSV: csvKeys(output.ChangesCSV), output.BreaksParquet: inParquet} {
		if !slices.Equal(got, want) {
			first := 0
			for first < min(len(got), len(want)) && got[first] == want[first] {
				first++
			}
			t.Errorf("%s: %d breaks, want %d in order of rule and break id; they differ from row %d", name, len(got), len(want), first+1)
		}
	}
}
