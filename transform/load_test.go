package transform_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	reconsql "recon/sql"
	"recon/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tables are dumped in this order, each sorted by its provenance.
var tables = []struct{ name, order string }{
	{"payment_ops", "source_file, source_line"},
	{"recon_transactions", "source_file, source_line"},
	{"failure_conversions", "source_file, source_line"},
	{"statements", "account, start_datetime"},
	{"statement_entries", "source_file, source_line"},
	{"liquidations", "liquidation_id"},
	{"liquidation_trades", "liquidation_id, source_line"},
	{"trade_executions", "liquidation_id, trade_id, source_line"},
	{"payments", "payment_id"},
	{"payment_fees", "payment_id, fee_currency"},
	{"payment_execution_results", "payment_id, result_list, execution_result_order, execution_result_id"},
	{"payment_quote_elements", "payment_id, quote_element_order, quote_element_id"},
	{"payment_user_info", "payment_id, position"},
	{"transfers", "transfer_id"},
	{"balances", "fetched_at, side, currency, account_name"},
	{"fees", "fee_id"},
	{"quarantine", "source_file, line, path"},
	{"unknown_values", "table_name, column_name, value"},
	{"report_files", "report_id"},
	{"report_changes", "report_type, row_key, column_name"},
	{"source_files", "run_id, source_file"},
	{"payment_trace", "payment_id"},
}

func newDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := reconsql.OpenDB(filepath.Join(t.TempDir(), "t.duckdb"), false)
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
	files, err := raw.ReadIndex(dir)
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
			st := load(t, db, dir)
			// The load turns insertion order off while it runs (a database setting) and back on.
			var ordered bool
			if err := db.QueryRow(`SELECT current_setting('preserve_insertion_order')`).Scan(&ordered); err != nil || !ordered {
				t.Errorf("preserve_insertion_order after the load: %v (%v), want true", ordered, err)
			}
			// Every rejected row is in quarantine, and source_files counts what each file gave.
			var quarantined, counted int64
			if err := db.QueryRow(`SELECT (SELECT count(*) FROM quarantine), (SELECT coalesce(sum(rows_quarantined), 0) FROM source_files)`).
				Scan(&quarantined, &counted); err != nil {
				t.Fatal(err)
			}
			if quarantined != st.Quarantined() || counted != st.Quarantined() {
				t.Errorf("quarantine holds %d rows, source_files counts %d, the load rejected %d", quarantined, counted, st.Quarantined())
			}
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

// TestMalformedRowsQuarantined checks the quarantine of the malformed cases
// row by row: four bad rows, each with its line, reason and exact text, and
// every good row loaded, the one with an unknown payment_state included. CSV lines count the header as line 1; JSON lines
// are element numbers.
func TestMalformedRowsQuarantined(t *testing.T) {
	type bad struct {
		line   int64
		reason string
	}
	for _, tc := range []struct {
		dir, file string
		rawOf     func(t *testing.T, file []byte, line int64) string
		want      []bad
	}{{
		dir: "malformed", file: "reports/payment_ops.csv", rawOf: csvLine,
		want: []bad{{3, "bad decimal in sent_amount: 12,50"}, {5, "bad timestamp in executed_at: 2026-13-45T99:00:00Z"},
			{7, "too few columns: 10, header has 24"}, {11, "missing network_payment_id"}},
	}, {
		dir: "malformed_json", file: "reports/payment_ops.json", rawOf: jsonElement,
		want: []bad{{2, "bad decimal in sent_amount: 12,50"}, {4, "bad timestamp in executed_at: 2026-13-45T99:00:00Z"},
			{6, "not a JSON object"}, {10, "missing network_payment_id"}},
	}} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("../testdata/load", tc.dir)
			db := newDB(t)
			st := load(t, db, dir)
			if st.Rows(raw.SourcePaymentOps) != 7 || st.Quarantined() != int64(len(tc.want)) {
				t.Fatalf("loaded %d rows, quarantined %d; want 7 and %d", st.Rows(raw.SourcePaymentOps), st.Quarantined(), len(tc.want))
			}
			var loaded int
			if err := db.QueryRow(`SELECT count(*) FROM payment_ops`).Scan(&loaded); err != nil || loaded != 7 {
				t.Fatalf("payment_ops has %d rows (%v), want 7", loaded, err)
			}
			file, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.Query(`SELECT line, reason, raw FROM quarantine ORDER BY line`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []bad
			for rows.Next() {
				var b bad
				var raw string
				if err := rows.Scan(&b.line, &b.reason, &raw); err != nil {
					t.Fatal(err)
				}
				if want := tc.rawOf(t, file, b.line); raw != want {
					t.Errorf("line %d raw = %q, want the file's %q", b.line, raw, want)
				}
				b.reason, _, _ = strings.Cut(b.reason, " (") // drop the parser's detail
				got = append(got, b)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(bad{})); diff != "" {
				t.Errorf("quarantine (-want +got):\n%s", diff)
			}
		})
	}
}

// csvLine returns line n of a file (from 1).
func csvLine(t *testing.T, file []byte, n int64) string {
	t.Helper()
	return strings.Split(string(file), "\n")[n-1]
}

// jsonElement returns element n (from 1) of a JSON array, as written.
func jsonElement(t *testing.T, file []byte, n int64) string {
	t.Helper()
	var els []json.RawMessage
	if err := json.Unmarshal(file, &els); err != nil {
		t.Fatal(err)
	}
	return string(els[n-1])
}

// TestCSVAndJSONLoadTheSameRows: the JSON download of a report (numbers
// bare, currency codes lower case) loads exactly the rows of its CSV download.
func TestCSVAndJSONLoadTheSameRows(t *testing.T) {
	rowsOf := func(dir string) map[string][]string {
		db := newDB(t)
		load(t, db, dir)
		out := map[string][]string{}
		for _, table := range []string{"payment_ops", "recon_transactions"} {
			out[table] = queryStrings(t, db, `SELECT CAST(r AS VARCHAR) FROM (SELECT * EXCLUDE (report_id, source_file, source_line) FROM `+table+`) r ORDER BY ALL`)
		}
		return out
	}
	csvRows, jsonRows := rowsOf("../testdata/load/sample"), rowsOf("../testdata/load/json_reports")
	if len(csvRows["payment_ops"]) == 0 || len(csvRows["recon_transactions"]) == 0 {
		t.Fatal("the sample loaded nothing")
	}
	if diff := cmp.Diff(csvRows, jsonRows); diff != "" {
		t.Errorf("CSV and JSON downloads load different rows (-csv +json):\n%s", diff)
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
