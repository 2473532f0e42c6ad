package pipeline_test

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/extract/sandbox/sandboxtest"
	"recon/output"
	"recon/pipeline"
	"recon/rules"
	reconsql "recon/sql"
)

var (
	day0 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	// now is the morning after a 7-day window: the sandbox places items just
	// inside and just past the 24-hour grace periods around it.
	now = time.Date(2026, 10, 8, 6, 0, 0, 0, time.UTC)
)

// env is a sandbox on a loopback port and a configuration pointing at it.
type env struct {
	sb  *sandbox.Sandbox
	cfg pipeline.Config
}

// newEnv serves a sandbox of days from day0 (with faults, if given).
func newEnv(t *testing.T, days int, faults ...sandbox.Faults) *env {
	t.Helper()
	return newEnvFor(t, envSandbox(days, faults...))
}

// envSandbox is newEnv's sandbox: seed 7, days from day0, clock at now.
func envSandbox(days int, faults ...sandbox.Faults) sandbox.Config {
	cfg := sandbox.Config{Seed: 7, Start: day0, Days: days, Now: func() time.Time { return now }}
	for _, f := range faults {
		cfg.Faults = f
	}
	return cfg
}

// newEnvFor serves the sandbox of cfg on loopback (wrap as in sandbox.Serve);
// the run's clock starts at now and ticks a second per reading.
func newEnvFor(t testing.TB, cfg sandbox.Config, wrap ...func(http.Handler) http.Handler) *env {
	t.Helper()
	srv := sandboxtest.Serve(t, cfg, wrap...)
	dir := t.TempDir()
	clock := now
	return &env{sb: srv.Sandbox, cfg: pipeline.Config{
		DB: filepath.Join(dir, "recon.duckdb"), ArchiveURL: filepath.Join(dir, "archive"),
		WorkDir: filepath.Join(dir, "work"), Accounts: srv.Sandbox.Accounts(), Format: raw.FormatCSV, Version: "test",
		Now:     func() time.Time { clock = clock.Add(time.Second); return clock },
		Extract: srv.ExtractConfig(extract.Config{PollInterval: time.Millisecond, Retry: extract.RetryPolicy{MaxAttempts: 3}}),
	}}
}

func (e *env) run(t *testing.T, w raw.Window) *pipeline.Result {
	t.Helper()
	res, err := pipeline.Run(context.Background(), e.cfg, w)
	if err != nil {
		t.Fatalf("run %s: %v", w, err)
	}
	return res
}

type key struct{ Rule, Payment, Account string }

func openBreaks(t testing.TB, dbPath string) []key {
	t.Helper()
	return keys(t, dbPath, keysFrom+`breaks WHERE status <> 'resolved'`)
}

// keysFrom starts a query of keys: the (rule, payment, account) of the rows of a table.
const keysFrom = `SELECT rule_id, coalesce(payment_id, ''), coalesce(account, '') FROM `

// keys returns the (rule, payment, account) rows of query, from a handle
// closed on return: DuckDB shares one open instance per path within a
// process, so a handle left open would hide the file a later run publishes.
func keys(t testing.TB, dbPath, query string) []key {
	t.Helper()
	db, err := reconsql.OpenDB(dbPath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.Rule, &k.Payment, &k.Account); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	return sortKeys(got)
}

func sortKeys(ks []key) []key {
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Payment != b.Payment {
			return a.Payment < b.Payment
		}
		return a.Account < b.Account
	})
	return ks
}

// column is the first column of a query's rows, as text.
func column(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func openRO(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := reconsql.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRunFindsExactlyTheInjectedBreaks is the end-to-end proof: sandbox over
// loopback, a full run, and the breaks equal the sandbox's ground truth. The
// sandbox adds malformed report rows, each a row_quarantined break.
func TestRunFindsExactlyTheInjectedBreaks(t *testing.T) {
	e, _ := webhookEnv(t, 7, sandbox.Faults{MalformedRows: 0.02}) // deliveries settled (notification_test.go)
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	res := e.run(t, w)
	if res.Verdict != output.Complete {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Reasons)
	}
	truth := e.sb.Truth()
	asKeys := func(bs []sandbox.TruthBreak) []key {
		var ks []key
		for _, b := range bs {
			ks = append(ks, key{b.RuleID, b.PaymentID, b.Account})
		}
		return sortKeys(ks)
	}
	// Every rule kind is injected several times, with items on both sides of a grace period.
	perRule := map[string]int{}
	for _, b := range truth.Breaks {
		perRule[b.RuleID]++
	}
	for _, r := range catalogue(t) {
		want := 3
		if r == "balance_snapshot_mismatch" {
			want = 2 // one snapshot a run: a break per account at most
		}
		if perRule[r] < want {
			t.Errorf("the sandbox injected %d breaks of %s, want several", perRule[r], r)
		}
	}
	pendingPerRule, decoysPerRule := map[string]int{}, map[string]int{}
	for _, b := range truth.Pending {
		pendingPerRule[b.RuleID]++
	}
	for _, b := range truth.Decoys {
		decoysPerRule[b.RuleID]++
	}
	t.Logf("truth: %d breaks %v; %d pending %v; %d decoys %v", len(truth.Breaks), perRule,
		len(truth.Pending), pendingPerRule, len(truth.Decoys), decoysPerRule)
	if len(truth.Pending) < 3 || len(truth.Decoys) < 2 {
		t.Errorf("the sandbox placed %d pending items and %d decoys, want some of each", len(truth.Pending), len(truth.Decoys))
	}
	got := openBreaks(t, e.cfg.DB)
	if diff := cmp.Diff(asKeys(truth.Breaks), got); diff != "" {
		t.Errorf("breaks differ from ground truth (-want +got):\n%s", diff)
	}
	pending := keys(t, e.cfg.DB, keysFrom+"pending")
	if diff := cmp.Diff(asKeys(truth.Pending), pending); diff != "" {
		t.Errorf("pending items differ from ground truth (-want +got):\n%s", diff)
	}
	var total int64
	for _, n := range res.Found {
		total += n
	}
	if total != int64(len(got)) || res.Pending != int64(len(pending)) {
		t.Errorf("result counts %d breaks and %d pending; the database holds %d and %d", total, res.Pending, len(got), len(pending))
	}
	// The archive holds a manifest whose checksums match the files.
	assertManifest(t, e.cfg.ArchiveURL, res.RunID)
}

// TestRunSurvivesFaults runs the pipeline with every sandbox fault on, in
// create mode (CSV and JSON reports) and collect mode: each run finds
// exactly the injected breaks and pending items, quarantines exactly the
// malformed rows the sandbox added, and (create mode) loads every table
// with the same rows, by count and sum of amounts, as a fault-free run of
// the same seed with CSV reports.
func TestRunSurvivesFaults(t *testing.T) {
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 6))
	plain := newEnv(t, 7)
	plain.run(t, w)
	want := tables(t, plain.cfg.DB)
	for table, tl := range want {
		if tl.Rows == 0 {
			t.Errorf("the fault-free run loaded no %s", table)
		}
	}
	faults := sandbox.ModerateFaults()
	faults.Latency = sandbox.Duration(time.Millisecond)
	for _, tt := range []struct{ mode, format string }{
		{extract.ModeCreate, raw.FormatCSV}, {extract.ModeCreate, raw.FormatJSON}, {extract.ModeCollect, raw.FormatCSV},
	} {
		mode := tt.mode
		t.Run(mode+" "+tt.format, func(t *testing.T) {
			e := newEnv(t, 7, faults)
			e.cfg.ReportMode, e.cfg.Format = mode, tt.format
			e.cfg.Extract.Retry, e.cfg.Extract.ReportTries = extract.RetryPolicy{MaxAttempts: 6}, 4
			res := e.run(t, w)
			if res.Verdict != output.Complete {
				t.Fatalf("verdict %s: %v", res.Verdict, res.Reasons)
			}
			var truth, pending []key
			for _, b := range e.sb.Truth().Breaks {
				truth = append(truth, key{b.RuleID, b.PaymentID, b.Account})
			}
			for _, b := range e.sb.Truth().Pending {
				pending = append(pending, key{b.RuleID, b.PaymentID, b.Account})
			}
			if diff := cmp.Diff(sortKeys(truth), openBreaks(t, e.cfg.DB)); diff != "" {
				t.Errorf("breaks differ from ground truth (-want +got):\n%s", diff)
			}
			got := keys(t, e.cfg.DB, keysFrom+"pending")
			if diff := cmp.Diff(sortKeys(pending), got); diff != "" {
				t.Errorf("pending items differ from ground truth (-want +got):\n%s", diff)
			}
			if malformed := e.sb.Injected()["malformed_row"]; malformed == 0 || res.Quarantined != int64(malformed) {
				t.Errorf("quarantined %d rows, the sandbox added %d malformed", res.Quarantined, malformed)
			}
			if mode == extract.ModeCreate {
				if diff := cmp.Diff(want, tables(t, e.cfg.DB)); diff != "" {
					t.Errorf("tables differ from the fault-free run's (-want +got):\n%s", diff)
				}
			}
			assertManifest(t, e.cfg.ArchiveURL, res.RunID)
			if n := len(e.sb.FilesAuthorization()); n != 0 {
				t.Errorf("the download host got %d Authorization headers", n)
			}
		})
	}
}

// tally is a table's rows and the sum of one amount column.
type tally struct {
	Rows int64
	Sum  string
}

// tables tallies every source table.
func tables(t *testing.T, path string) map[string]tally {
	t.Helper()
	db := openRO(t, path)
	out := map[string]tally{}
	for table, amount := range map[string]string{
		"payment_ops": "sent_amount", "recon_transactions": "sent_amount", "failure_conversions": "sent_amount",
		"statement_entries": "balance_change", "liquidations": "destination_amount", "liquidation_trades": "amount",
		"trade_executions": "destination_amount", "payments": "quote_amount", "transfers": "amount",
		"balances": "balance", "fees": "value",
	} {
		var tl tally
		if err := db.QueryRow(`SELECT count(*), CAST(coalesce(sum(`+amount+`), 0) AS VARCHAR) FROM `+table).Scan(&tl.Rows, &tl.Sum); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out[table] = tl
	}
	return out
}

// catalogue returns the ids of the built-in rules.
func catalogue(t *testing.T) []string {
	t.Helper()
	rs, err := rules.Load(rules.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func assertManifest(t *testing.T, archive, runID string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(archive, "run_date=*", "run_id="+runID, output.ManifestName))
	if len(matches) != 1 {
		t.Fatalf("manifest of %s: found %v", runID, matches)
	}
	store, err := output.NewDirStore(archive)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(archive, filepath.Dir(matches[0]))
	m, err := output.ReadManifest(context.Background(), store, filepath.ToSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) < 3 {
		t.Fatalf("manifest lists %d files", len(m.Files))
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, f := range m.Files {
		b := read(f.Path)
		if got := output.SHA256(b); got != f.SHA256 || int64(len(b)) != f.Size {
			t.Errorf("%s: sha256 %s size %d, manifest says %s %d", f.Path, got, len(b), f.SHA256, f.Size)
		}
	}
	assertFileRows(t, m, read)
}

// TestRerunIsIdempotent runs the same range twice: every table holds the
// same rows afterwards.
func TestRerunIsIdempotent(t *testing.T) {
	e := newEnv(t, 3)
	w, _ := raw.NewWindow(day0, day0.AddDate(0, 0, 2))
	e.run(t, w)
	first := snapshot(t, e.cfg.DB)
	e.run(t, w)
	second := snapshot(t, e.cfg.DB)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("tables changed on rerun (-first +second):\n%s", diff)
	}
}

// snapshot returns, per source table, its rows without run-specific provenance.
func snapshot(t *testing.T, path string) map[string][]string {
	t.Helper()
	// Closed on return: DuckDB shares one open instance per path within a
	// process, so a handle left open would hide the file a later run publishes.
	db, err := reconsql.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := map[string]string{
		"payment_ops":         `SELECT * EXCLUDE (report_id, source_file) FROM payment_ops`,
		"recon_transactions":  `SELECT * EXCLUDE (report_id, source_file) FROM recon_transactions`,
		"failure_conversions": `SELECT * EXCLUDE (report_id, source_file) FROM failure_conversions`,
		"statement_entries":   `SELECT * EXCLUDE (run_id) FROM statement_entries`,
		"statements":          `SELECT * EXCLUDE (run_id) FROM statements`,
		"quarantine":          `SELECT * EXCLUDE (run_id, report_id, source_file) FROM quarantine`,
		"breaks":              `SELECT break_id, rule_id, payment_id, account, expected FROM breaks WHERE status <> 'resolved'`,
	}
	out := map[string][]string{}
	for table, q := range queries {
		rows, err := db.Query(`SELECT CAST(t AS VARCHAR) FROM (` + q + `) t ORDER BY ALL`)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], s)
		}
		rows.Close()
		if len(out[table]) == 0 && table != "quarantine" {
			t.Fatalf("%s is empty", table)
		}
	}
	return out
}
