package transform_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/pipeline"
	reconsql "recon/sql"
	"recon/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tables are dumped in this order, each sorted by its provenance.
var tables = []struct{ name, order string }{
	{"payment_ops", "source_file, source_line"},
	{"recon_transactions", "source_file, source_line"},
	{"failure_conversions", "source_file, source_line"},
	{"statement_entries", "source_file, source_line"},
	{"quarantine", "source_file, line"},
	{"report_files", "report_id"},
}

func newDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := pipeline.OpenDB(filepath.Join(t.TempDir(), "t.duckdb"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := reconsql.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

func load(t *testing.T, db *sql.DB, dir string) transform.Stats {
	t.Helper()
	files, err := extract.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := transform.NewLoader(db, dir, "r-test", nil).Load(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// dump renders the loaded tables as CSV sections, for golden comparison.
func dump(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, tb := range tables {
		rows, err := db.Query(`SELECT COLUMNS(*)::VARCHAR FROM (SELECT * FROM ` + tb.name + ` ORDER BY ` + tb.order + `)`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var n int
		var body strings.Builder
		w := csv.NewWriter(&body)
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
				if v.Valid {
					rec[i] = v.String
				} else {
					rec[i] = `\N`
				}
			}
			w.Write(rec)
			n++
		}
		rows.Close()
		w.Flush()
		if n == 0 {
			continue
		}
		b.WriteString("== " + tb.name + "\n" + body.String())
	}
	return b.String()
}

// TestLoadGolden loads each testdata/load/<case> folder and compares every
// table with <case>/want.golden (regenerate with -update).
func TestLoadGolden(t *testing.T) {
	cases, _ := filepath.Glob("../testdata/load/*")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			db := newDB(t)
			load(t, db, dir)
			got := dump(t, db)
			golden := filepath.Join(dir, "want.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run make update-golden)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("loaded tables differ from %s (-want +got):\n%s", golden, diff)
			}
			// A second load of the same files changes nothing.
			load(t, db, dir)
			if diff := cmp.Diff(got, dump(t, db)); diff != "" {
				t.Errorf("second load changed the tables (-first +second):\n%s", diff)
			}
		})
	}
}

// TestMalformedRowsQuarantined checks the quarantine of the malformed case
// line by line: five bad rows, each with its line and reason, and the rest loaded.
func TestMalformedRowsQuarantined(t *testing.T) {
	db := newDB(t)
	st := load(t, db, "../testdata/load/malformed")
	if st.Rows(extract.SourcePaymentOps) != 6 || st.Quarantined() != 5 {
		t.Fatalf("loaded %d rows, quarantined %d; want 6 and 5", st.Rows(extract.SourcePaymentOps), st.Quarantined())
	}
	rows, err := db.Query(`SELECT line, reason, raw FROM quarantine ORDER BY line`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := []struct {
		line   int64
		reason string
	}{{3, "sent_amount"}, {5, "bad timestamp in executed_at"}, {7, "too few columns"}, {9, "unknown payment_state: TELEPORTED"}, {11, "missing network_payment_id"}}
	lines, _ := os.ReadFile("../testdata/load/malformed/reports/payment_ops.csv")
	fileLines := strings.Split(string(lines), "\n")
	i := 0
	for rows.Next() {
		var line int64
		var reason, raw string
		if err := rows.Scan(&line, &reason, &raw); err != nil {
			t.Fatal(err)
		}
		if i >= len(want) {
			t.Fatalf("extra quarantine row at line %d: %s", line, reason)
		}
		if line != want[i].line || !strings.Contains(reason, want[i].reason) {
			t.Errorf("quarantine row %d = line %d %q, want line %d containing %q", i, line, reason, want[i].line, want[i].reason)
		}
		if raw != fileLines[line-1] {
			t.Errorf("line %d raw = %q, want the file's line %q", line, raw, fileLines[line-1])
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%d quarantine rows, want %d", i, len(want))
	}
}
