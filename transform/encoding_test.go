package transform_test

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// badRow is a quarantine row, as the encoding tests compare it.
type badRow struct {
	Line   int64
	Key    string
	Reason string
	Raw    string
}

func quarantineRows(t *testing.T, db *sql.DB, source string) []badRow {
	t.Helper()
	rows, err := db.Query(`SELECT line, coalesce(record_key, ''), reason, raw FROM quarantine WHERE source = ? ORDER BY line`, source)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []badRow
	for rows.Next() {
		var b badRow
		if err := rows.Scan(&b.Line, &b.Key, &b.Reason, &b.Raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func count(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// lineOf returns the 1-based line of text holding marker.
func lineOf(t *testing.T, text []byte, marker string) int {
	t.Helper()
	for i, l := range strings.Split(string(text), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no line with %s", marker)
	return 0
}

// TestInvalidUTF8RowIsQuarantined: one byte 0xff in one cell of a CSV report,
// of a JSON report and of a server API page sends that row to quarantine,
// with its line, the column or offset, and its text (the byte written as
// \xff); every other row loads. Without the check DuckDB refuses the whole
// file ("Invalid unicode").
func TestInvalidUTF8RowIsQuarantined(t *testing.T) {
	const id = "97eaa87c-a75d-44dd-b072-a561c3f10fb6"
	csvText := replaceOnLine(t, readTestdata(t, "sample/reports/payment_ops.csv"), id, "Elena Mendoza", "Elena M\xffndoza")
	jsonText := replaceOnLine(t, readTestdata(t, "json_reports/reports/payment_ops.json"), id, "Elena Mendoza", "Elena M\xffndoza")
	page := readTestdata(t, "sources/payments/2026-10-01_2026-10-01_p0000.json")
	page = bytes.Replace(page, []byte(`"payment_id": "3a4c81e0`), []byte("\"payment_id\": \"3a4c81e0\xff"), 1)
	w := window(t, "2026-10-01", "2026-10-01")
	json := rawFile{raw.File{Source: raw.SourcePaymentOps, Format: raw.FormatJSON, Path: "reports/ops-json.json",
		Window: w, Status: raw.StatusReady, ReportID: "ops-json", Request: "test"}, jsonText}
	payments := rawFile{raw.File{Source: raw.SourcePayment, Format: raw.FormatJSON, Path: "payments/p0000.json",
		Window: w, Status: raw.StatusReady, Request: "test"}, page}

	db := newDB(t)
	load(t, db, writeExtract(t, opsReport(t, "ops-csv", "2026-10-01", "2026-10-01", csvText)))
	line := int64(lineOf(t, csvText, id))
	want := []badRow{{line, id, "invalid UTF-8 in remitter_name: byte 0xff at offset 7",
		strings.ReplaceAll(strings.Split(string(csvText), "\n")[line-1], "\xff", `\xff`)}}
	if diff := cmp.Diff(want, quarantineRows(t, db, raw.SourcePaymentOps)); diff != "" {
		t.Errorf("CSV: quarantine (-want +got):\n%s", diff)
	}
	if n := count(t, db, `SELECT count(*) FROM payment_ops`); n != 5 {
		t.Errorf("CSV: payment_ops has %d rows, want the 5 others", n)
	}

	db = newDB(t)
	load(t, db, writeExtract(t, json, payments))
	got := quarantineRows(t, db, raw.SourcePaymentOps)
	if len(got) != 1 || got[0].Line != 2 || got[0].Key != id || !strings.HasPrefix(got[0].Reason, "invalid UTF-8: byte 0xff at offset") ||
		!strings.Contains(got[0].Raw, `Elena M\xffndoza`) {
		t.Errorf("JSON report: quarantine %+v, want element 2 of %s, invalid UTF-8, its text with \\xff", got, id)
	}
	if n := count(t, db, `SELECT count(*) FROM payment_ops`); n != 5 {
		t.Errorf("JSON report: payment_ops has %d rows, want the 5 others", n)
	}
	got = quarantineRows(t, db, raw.SourcePayment)
	if len(got) != 1 || got[0].Line != 1 || !strings.HasPrefix(got[0].Key, `3a4c81e0\xff`) || !strings.HasPrefix(got[0].Reason, "invalid UTF-8") {
		t.Errorf("server API page: quarantine %+v, want element 1, invalid UTF-8", got)
	}
	if n := count(t, db, `SELECT count(*) FROM payments`); n != 1 {
		t.Errorf("server API page: payments has %d rows, want the other one", n)
	}
}

// TestJSONReportWithByteOrderMark: a JSON report starting with a UTF-8 byte
// order mark loads like the same report without it.
func TestJSONReportWithByteOrderMark(t *testing.T) {
	text := append([]byte("\ufeff"), readTestdata(t, "json_reports/reports/payment_ops.json")...)
	db := newDB(t)
	load(t, db, writeExtract(t, rawFile{raw.File{Source: raw.SourcePaymentOps, Format: raw.FormatJSON,
		Path: "reports/ops.json", Window: window(t, "2026-10-01", "2026-10-01"), Status: raw.StatusReady,
		ReportID: "ops", Request: "test"}, text}))
	if n, q := count(t, db, `SELECT count(*) FROM payment_ops`), count(t, db, `SELECT count(*) FROM quarantine`); n != 6 || q != 0 {
		t.Errorf("loaded %d rows and quarantined %d, want 6 and 0", n, q)
	}
}

// TestBothPaymentIDSpellings: a CSV report with both network_payment_id and
// ripplenet_payment_id loads the rows where they agree (or one is empty) and
// quarantines the row where they differ.
func TestBothPaymentIDSpellings(t *testing.T) {
	const id = "81ead0cc-626e-4d47-97b3-ac1f99077392"
	lines := strings.Split(strings.TrimRight(string(readTestdata(t, "sample/reports/payment_ops.csv")), "\n"), "\n")
	lines[0] += ",network_payment_id"
	for i, l := range lines[1:] {
		pid := strings.Split(l, ",")[1]
		switch {
		case pid == id:
			pid = "81ead0cc-0000-0000-0000-000000000000"
		case i == 0:
			pid = "" // one spelling empty: the other gives the id
		}
		lines[i+1] = l + "," + pid
	}
	text := []byte(strings.Join(lines, "\n") + "\n")
	db := newDB(t)
	load(t, db, writeExtract(t, opsReport(t, "ops", "2026-10-01", "2026-10-01", text)))
	line := int64(lineOf(t, text, id))
	want := []badRow{{line, id, "two fields give network_payment_id different values: " + id + " and 81ead0cc-0000-0000-0000-000000000000",
		strings.Split(string(text), "\n")[line-1]}}
	if diff := cmp.Diff(want, quarantineRows(t, db, raw.SourcePaymentOps)); diff != "" {
		t.Errorf("quarantine (-want +got):\n%s", diff)
	}
	if n := count(t, db, `SELECT count(*) FROM payment_ops WHERE network_payment_id IS NOT NULL`); n != 5 {
		t.Errorf("payment_ops has %d rows with an id, want the 5 others", n)
	}
}
