package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/extract/raw"
	"recon/extract/sandbox"
	"recon/internal/bench"
	"recon/transform"
)

// TestBatchesLoadEveryValueWithBuffersReused: a RECON report of several
// Arrow batches per worker, whose buffers are used again for the next batch
// once DuckDB releases a batch it has read, loads exactly the rows DuckDB's
// own read_csv reads from the same file, every column compared. A buffer
// handed out again while DuckDB still read it would show as rows that
// differ.
func TestBatchesLoadEveryValueWithBuffersReused(t *testing.T) {
	dir := t.TempDir()
	w, written := reconReport(t, dir, 3, 10_000)
	path := filepath.Join(dir, "reports", "recon.csv")
	if written < 4*8192 {
		t.Fatalf("the report has %d rows: too few to fill several batches", written)
	}

	ctx := context.Background()
	db := newDB(t)
	files := []raw.File{{Source: raw.SourceRecon, Format: raw.FormatCSV, Path: "reports/recon.csv",
		Window: w, Status: raw.StatusReady, ReportID: "r1"}}
	st, err := transform.NewLoader(db, dir, "r-test", nil).Load(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Rows(raw.SourceRecon); got != int64(written) {
		t.Fatalf("loaded %d rows, the report has %d", got, written)
	}
	create, insert, err := bench.NativeCSV(ctx, db, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{create, insert} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cols := strings.Join(queryStrings(t, db, `SELECT column_name FROM duckdb_columns() WHERE table_name = 'native' ORDER BY column_index`), ", ")
	for _, q := range []string{
		`SELECT CAST(r AS VARCHAR) FROM (SELECT ` + cols + ` FROM recon_transactions EXCEPT ALL SELECT ` + cols + ` FROM native) r LIMIT 3`,
		`SELECT CAST(r AS VARCHAR) FROM (SELECT ` + cols + ` FROM native EXCEPT ALL SELECT ` + cols + ` FROM recon_transactions) r LIMIT 3`,
	} {
		if diff := queryStrings(t, db, q); len(diff) > 0 {
			t.Errorf("rows loaded by recon and read by read_csv differ, e.g.:\n%s", strings.Join(diff, "\n"))
		}
	}
}

// reconReport writes the RECON CSV of a sandbox day (2026-10-01) of
// payments to dir/reports/recon.csv and returns its window and rows.
func reconReport(tb testing.TB, dir string, seed int64, payments int) (raw.Window, int) {
	tb.Helper()
	day := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	w, _ := raw.NewWindow(day, day)
	sb, err := sandbox.New(sandbox.Config{Seed: seed, Start: day, Days: 1, PaymentsPerDay: payments,
		Now: func() time.Time { return day.AddDate(0, 0, 5) }})
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "reports", "recon.csv")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	rows, err := sb.WriteReport(f, raw.ReportRecon, raw.FormatCSV, w)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return w, rows
}
