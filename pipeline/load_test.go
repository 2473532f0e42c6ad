package pipeline_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
	"recon/rules"
	reconsql "recon/sql"
)

// TestRunOnArchivedInputs is recon load's path: the raw files an archived
// run used, run again into an empty warehouse without the network, give the
// same open breaks; a raw file changed since stops the run before anything
// is published.
func TestRunOnArchivedInputs(t *testing.T) {
	e := newEnv(t, 7)
	w := mustWindow(t, 0, 6)
	first := e.run(t, w)
	inputs, _ := filepath.Glob(filepath.Join(e.cfg.ArchiveURL, "run_date=*", "run_id="+first.RunID, "inputs"))
	if len(inputs) != 1 {
		t.Fatalf("inputs of %s: found %v", first.RunID, inputs)
	}

	offline := func(dir string) pipeline.Config {
		cfg := e.cfg
		cfg.DB, cfg.WorkDir, cfg.ArchiveURL = filepath.Join(dir, "recon.duckdb"), filepath.Join(dir, "work"), filepath.Join(dir, "archive")
		cfg.Extract, cfg.InputDir = extract.Config{}, inputs[0] // no service URL, no credentials
		return cfg
	}
	cfg := offline(t.TempDir())
	res, err := pipeline.Run(t.Context(), cfg, w)
	if err != nil {
		t.Fatalf("run on %s: %v", inputs[0], err)
	}
	if res.Verdict != first.Verdict || !slices.Equal(res.Reasons, first.Reasons) {
		t.Errorf("verdict %s %q, the archived run's %s %q", res.Verdict, res.Reasons, first.Verdict, first.Reasons)
	}
	want := openBreaks(t, e.cfg.DB)
	if len(want) == 0 {
		t.Fatal("the first run found no break: nothing to compare")
	}
	if diff := cmp.Diff(want, openBreaks(t, cfg.DB)); diff != "" {
		t.Errorf("open breaks (-archived run +run on its inputs):\n%s", diff)
	}

	// One raw file changed after the fact.
	files, err := raw.ReadIndex(inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f raw.File) bool { return f.Source == raw.SourceRecon && f.Path != "" })
	if i < 0 {
		t.Fatal("no RECON file among the inputs")
	}
	name := filepath.Join(inputs[0], filepath.FromSlash(files[i].Path))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(strings.Replace(string(b), "1", "2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tampered := offline(t.TempDir())
	if _, err := pipeline.Run(t.Context(), tampered, w); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("run on a changed raw file: err %v, want a sha256 mismatch", err)
	}
	if _, err := os.Stat(tampered.DB); !os.IsNotExist(err) {
		t.Errorf("a database was published after the failed run: stat err %v", err)
	}
}

// inputFile is one raw file of a hand-made input folder (recon load --dir).
type inputFile struct {
	file raw.File
	body []byte
}

// sampleReport is a report of testdata/load/sample (2026-10-01), its text
// passed through edit.
func sampleReport(t *testing.T, source, name string, edit func(string) string) inputFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/load/sample/reports", name))
	if err != nil {
		t.Fatal(err)
	}
	w := mustWindow(t, 0, 0)
	return inputFile{raw.File{Source: source, Format: raw.FormatCSV, Path: "reports/" + name, Window: w,
		Status: raw.StatusReady, ReportID: "r-" + source, Request: "test"}, []byte(edit(string(b)))}
}

// writeInputs writes files and an index.json with their sizes and sha256.
func writeInputs(t *testing.T, files ...inputFile) string {
	t.Helper()
	dir := t.TempDir()
	var index []raw.File
	for _, f := range files {
		f.file.Size, f.file.SHA256 = int64(len(f.body)), output.SHA256(f.body)
		index = append(index, f.file)
		p := filepath.Join(dir, filepath.FromSlash(f.file.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runInputs runs the pipeline over 2026-10-01 on an input folder, without
// the network, and returns the result and the run's summary.json.
func runInputs(t *testing.T, dir string) (*pipeline.Result, output.Summary, pipeline.Config) {
	t.Helper()
	work := t.TempDir()
	cfg := pipeline.Config{DB: filepath.Join(work, "recon.duckdb"), ArchiveURL: filepath.Join(work, "archive"),
		WorkDir: filepath.Join(work, "work"), InputDir: dir, Format: raw.FormatCSV, Version: "test",
		Accounts: []string{"acme_usd@rn.us.ny.acme", "acme_eur@rn.us.ny.acme"},
		Now:      func() time.Time { return now }}
	res, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0))
	if err != nil {
		t.Fatalf("run on %s: %v", dir, err)
	}
	runs, _ := filepath.Glob(filepath.Join(cfg.ArchiveURL, "run_date=*", "run_id="+res.RunID))
	if len(runs) != 1 {
		t.Fatalf("archive of %s: found %v", res.RunID, runs)
	}
	s, err := output.ReadSummary(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	return res, s, cfg
}

// TestUnknownStateLoadsWithoutFalseBreaks: a payment state the spec's lists
// do not show (SETTLED) in PAYMENT_OPS and in RECON loads as received, the
// other report's rows of those payments find their partner (no
// recon_missing_in_ops, no ops_missing_in_recon), the run stays complete, and
// summary.json counts the value per table and column.
func TestUnknownStateLoadsWithoutFalseBreaks(t *testing.T) {
	const opsSettled, reconSettled = "9133ef7a-1709-4867-911c-26182308324b", "ed3b8ef7-b524-4ef7-bfba-9a50bc2821f4"
	settle := func(id string) func(string) string {
		return func(text string) string {
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				if strings.Contains(l, id) {
					lines[i] = strings.Replace(l, ",COMPLETED,", ",SETTLED,", 1)
				}
			}
			return strings.Join(lines, "\n")
		}
	}
	dir := writeInputs(t, sampleReport(t, raw.SourcePaymentOps, "payment_ops.csv", settle(opsSettled)),
		sampleReport(t, raw.SourceRecon, "recon.csv", settle(reconSettled)))
	res, s, cfg := runInputs(t, dir)
	if res.Verdict != output.Complete || res.Quarantined != 0 {
		t.Errorf("verdict %s %q, %d rows quarantined; want complete and none", res.Verdict, res.Reasons, res.Quarantined)
	}
	for _, k := range openBreaks(t, cfg.DB) {
		if (k.Payment == opsSettled || k.Payment == reconSettled) && (k.Rule == "recon_missing_in_ops" || k.Rule == "ops_missing_in_recon") {
			t.Errorf("break %s on the payment with the unknown state %s", k.Rule, k.Payment)
		}
	}
	want := []output.UnknownValue{
		{Table: "payment_ops", Column: "payment_state", Value: "SETTLED", Rows: 1},
		{Table: "recon_transactions", Column: "payment_state", Value: "SETTLED", Rows: 2},
	}
	if diff := cmp.Diff(want, s.Unknown); diff != "" {
		t.Errorf("summary.json unknown_values (-want +got):\n%s", diff)
	}
	page, _ := filepath.Glob(filepath.Join(cfg.ArchiveURL, "run_date=*", "run_id="+res.RunID, output.SummaryHTML))
	if len(page) != 1 {
		t.Fatalf("summary.html: found %v", page)
	}
	b, err := os.ReadFile(page[0])
	if err != nil {
		t.Fatal(err)
	}
	if row := "<td>recon_transactions</td><td>payment_state</td><td>SETTLED</td><td class=\"num\">2</td>"; !strings.Contains(string(b), row) {
		t.Errorf("summary.html has no row %s", row)
	}
}

// TestUnreadableFileIsNotComplete: a quarantined row is a break and the run
// stays complete, but a report that cannot be read at all (no header the
// table knows) is a source that failed: after a complete run over the same
// day, a run whose RECON file is garbage is published as incomplete (exit 3)
// with a reason naming the file, its slice keeps the rows of the first run,
// and every rule that reads recon_transactions is held for the day (its
// breaks untouched) while the others run.
func TestUnreadableFileIsNotComplete(t *testing.T) {
	ops := sampleReport(t, raw.SourcePaymentOps, "payment_ops.csv", func(s string) string { return s })
	first, _, cfg := runInputs(t, writeInputs(t, ops, sampleReport(t, raw.SourceRecon, "recon.csv", func(s string) string { return s })))
	if first.Verdict != output.Complete {
		t.Fatalf("first run: verdict %s %q, want complete", first.Verdict, first.Reasons)
	}
	const reconRows = `SELECT count(*), coalesce(min(run_id), '') FROM recon_transactions t JOIN source_files f ON f.source_file = t.source_file`
	rowsBefore, loadedBy := count(t, cfg.DB, reconRows)
	if rowsBefore == 0 {
		t.Fatal("the first run loaded no RECON row")
	}
	before := breakRows(t, cfg.DB)

	bad := sampleReport(t, raw.SourceRecon, "recon.csv", func(string) string { return "\xff\xfe garbage\n1,2,3\n" })
	cfg.InputDir = writeInputs(t, ops, bad)
	cfg.Now = func() time.Time { return now.Add(24 * time.Hour) }
	res, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0))
	if err != nil {
		t.Fatalf("run on an unreadable report: %v, want it published as incomplete", err)
	}
	if res.Verdict != output.Incomplete || !slices.ContainsFunc(res.Reasons, func(r string) bool {
		return strings.HasPrefix(r, "raw file reports/recon.csv (recon 2026-10-01..2026-10-01) cannot be read: ")
	}) {
		t.Errorf("verdict %s %q, want incomplete with a reason naming reports/recon.csv", res.Verdict, res.Reasons)
	}
	if n, verdict := count(t, cfg.DB, `SELECT count(*), max(verdict) FROM runs WHERE run_id = '`+res.RunID+`'`); n != 1 || verdict != output.Incomplete {
		t.Errorf("published run ledger: %d rows of %s, verdict %q; want it published as incomplete", n, res.RunID, verdict)
	}
	if n, by := count(t, cfg.DB, reconRows); n != rowsBefore || by != loadedBy {
		t.Errorf("recon_transactions: %d rows loaded by %s, want the first run's %d by %s", n, by, rowsBefore, loadedBy)
	}

	catalogue, err := rules.Load(rules.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, r := range catalogue {
		held[r.ID] = slices.Contains(r.Reads, "recon_transactions")
		found := slices.ContainsFunc(res.Reasons, func(s string) bool {
			return strings.HasPrefix(s, "rule "+r.ID+" held for ") && strings.HasSuffix(s, ": recon_transactions is incomplete")
		})
		if found != held[r.ID] {
			t.Errorf("rule %s: held %v, want %v (reasons %q)", r.ID, found, held[r.ID], res.Reasons)
		}
	}
	if !held["ops_missing_in_recon"] || held["statement_balance_chain_break"] {
		t.Fatalf("held rules %v", held)
	}
	for id, b := range breakRows(t, cfg.DB) {
		if was, ok := before[id]; held[b.Rule] && (!ok || b != was) {
			t.Errorf("held rule %s: break %s went from %+v to %+v", b.Rule, id, was, b)
		}
	}
}

// count runs a query of one row of a count and a text on the database at dbPath.
func count(t *testing.T, dbPath, query string) (int64, string) {
	t.Helper()
	db, err := reconsql.OpenDB(dbPath, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	var s sql.NullString
	if err := db.QueryRow(query).Scan(&n, &s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n, s.String
}

// TestQuarantinedRowIsABreak: a RECON row with a byte that is not UTF-8 is
// quarantined, the run stays complete, and breaks.csv carries it as a
// row_quarantined break naming its payment; PAYMENT_OPS does not also
// report the payment missing from RECON.
func TestQuarantinedRowIsABreak(t *testing.T) {
	const id = "9133ef7a-1709-4867-911c-26182308324b"
	recon := sampleReport(t, raw.SourceRecon, "recon.csv", func(text string) string {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if strings.Contains(l, id) {
				lines[i] = strings.Replace(l, "Acme Bank", "Acme B\xffnk", 1)
			}
		}
		return strings.Join(lines, "\n")
	})
	dir := writeInputs(t, sampleReport(t, raw.SourcePaymentOps, "payment_ops.csv", func(s string) string { return s }), recon)
	first, s, cfg := runInputs(t, dir)
	if first.Verdict != output.Complete || first.Quarantined != 2 {
		t.Fatalf("verdict %s %q, %d rows quarantined; want complete and the payment's 2 RECON rows", first.Verdict, first.Reasons, first.Quarantined)
	}
	var found, missing int
	for _, k := range openBreaks(t, cfg.DB) {
		switch {
		case k.Rule == "row_quarantined" && k.Payment == id:
			found++
		case k.Rule == "ops_missing_in_recon" && k.Payment == id:
			missing++
		}
	}
	if found != 2 || missing != 0 {
		t.Errorf("%d row_quarantined and %d ops_missing_in_recon breaks of %s, want 2 and 0", found, missing, id)
	}
	for _, r := range s.ByRule {
		if r.Rule == "row_quarantined" && (r.Open != 2 || r.Severity != "P2") {
			t.Errorf("summary.json: row_quarantined %+v, want 2 open P2", r)
		}
	}

	// A later generation of the report (another sha256) loads the rows: the breaks resolve.
	cfg.InputDir = writeInputs(t, sampleReport(t, raw.SourcePaymentOps, "payment_ops.csv", func(s string) string { return s }),
		sampleReport(t, raw.SourceRecon, "recon.csv", func(s string) string { return s }))
	cfg.Now = func() time.Time { return now.Add(24 * time.Hour) }
	res, err := pipeline.Run(t.Context(), cfg, mustWindow(t, 0, 0))
	if err != nil || res.Verdict != output.Complete {
		t.Fatalf("second run: %v, verdict %v", err, res)
	}
	resolved := keys(t, cfg.DB, keysFrom+`breaks WHERE status = 'resolved' AND rule_id = 'row_quarantined'`)
	if len(resolved) != 2 || res.Quarantined != 0 {
		t.Errorf("after the good generation: %d row_quarantined breaks resolved, %d rows quarantined; want 2 and 0", len(resolved), res.Quarantined)
	}
	for _, k := range openBreaks(t, cfg.DB) {
		if k.Rule == "row_quarantined" {
			t.Errorf("row_quarantined still open: %+v", k)
		}
	}
}
