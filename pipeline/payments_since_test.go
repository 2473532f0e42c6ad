package pipeline_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/extract/raw"
	"recon/pipeline"
	"recon/transform"
)

// TestRecentWindowListsPaymentsOnce: a run over a window that ended a few
// hours before its clock lists the payments once, modified since the
// window's start, and loads exactly the payments (and their children) that
// a run long after, with the two lists by executed_at and modified_at,
// loads; the sandbox's later days are in that list and left out.
func TestRecentWindowListsPaymentsOnce(t *testing.T) {
	e := newEnv(t, 4)
	w := mustWindow(t, 1, 1)
	sw := raw.Window{From: w.From, To: w.To.AddDate(0, 0, 1)} // the server window of both runs
	recent := sw.End().Add(6 * time.Hour)
	if !extract.RecentWindow(sw, recent) || extract.RecentWindow(sw, now) {
		t.Fatalf("the clocks %s and %s do not make %s recent and old", recent, now, sw)
	}
	load := func(clock time.Time) (string, []string) {
		cfg := e.cfg
		dir := t.TempDir()
		cfg.DB, cfg.ArchiveURL, cfg.WorkDir = filepath.Join(dir, "recon.duckdb"), filepath.Join(dir, "archive"), filepath.Join(dir, "work")
		cfg.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
		if _, err := pipeline.Run(t.Context(), cfg, w); err != nil {
			t.Fatalf("run at %s: %v", clock, err)
		}
		db := openRO(t, cfg.DB)
		var paths []string
		rows, err := db.Query(`SELECT source_file FROM source_files WHERE source = 'payment' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		var out []string
		for _, tb := range []*transform.Table{&transform.Payments, &transform.PaymentFees, &transform.PaymentExecutionResults,
			&transform.PaymentQuoteElements, &transform.PaymentUserInfo} {
			out = append(out, tableRows(t, cfg.DB, tb.Name)...)
		}
		return strings.Join(paths, " "), out
	}
	oldPaths, old := load(now)
	recentPaths, got := load(recent)
	if strings.Contains(oldPaths, raw.PaymentsSincePrefix) || !strings.Contains(oldPaths, "payments/modified_") {
		t.Errorf("the run long after pulled %s, want the lists by executed_at and by modified_at", oldPaths)
	}
	for _, p := range strings.Fields(recentPaths) {
		if !strings.HasPrefix(p, raw.PaymentsSincePrefix) {
			t.Errorf("the recent run pulled %s, want only pages modified since the window's start", p)
		}
	}
	if len(old) < 100 {
		t.Fatalf("the run long after loaded %d payment rows, want many", len(old))
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("payments of the recent run differ from the two lists' (-old +recent):\n%s", diff)
	}
}

// tableRows returns every row of a warehouse table without its provenance, sorted.
func tableRows(t *testing.T, dbPath, table string) []string {
	t.Helper()
	db := openRO(t, dbPath)
	rows, err := db.Query(fmt.Sprintf(`SELECT * EXCLUDE (source_file, source_line, run_id) FROM %s ORDER BY ALL`, table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, table+" "+fmt.Sprint(vals...))
	}
	return out
}
