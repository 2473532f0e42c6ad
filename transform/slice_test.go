package transform_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/transform"
)

// rawFile is one raw file of a hand-made extract folder.
type rawFile struct {
	file raw.File
	body []byte
}

// writeExtract writes files and their index.json into a new folder.
func writeExtract(t *testing.T, files ...rawFile) string {
	t.Helper()
	dir := t.TempDir()
	var index []raw.File
	for _, f := range files {
		index = append(index, f.file)
		if f.file.Path == "" {
			continue // a FAILED file has none
		}
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

func window(t *testing.T, from, to string) raw.Window {
	t.Helper()
	w, err := raw.ParseWindow(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func readTestdata(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/load", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func opsReport(t *testing.T, id, from, to string, body []byte) rawFile {
	return rawFile{raw.File{Source: raw.SourcePaymentOps, Format: raw.FormatCSV, Path: "reports/" + id + ".csv",
		Window: window(t, from, to), Status: raw.StatusReady, ReportID: id, Request: "GET /v1/reports/download/" + id}, body}
}

// replaceOnLine replaces old by new on the line of the CSV text that contains marker.
func replaceOnLine(t *testing.T, text []byte, marker, old, new string) []byte {
	t.Helper()
	lines := strings.Split(string(text), "\n")
	for i, l := range lines {
		if strings.Contains(l, marker) {
			if !strings.Contains(l, old) {
				t.Fatalf("line with %s has no %q", marker, old)
			}
			lines[i] = strings.Replace(l, old, new, 1)
			return []byte(strings.Join(lines, "\n"))
		}
	}
	t.Fatalf("no line with %s", marker)
	return nil
}

type change struct {
	Kind, Key, Column, Old, New, OldReport, NewReport string
	OldLine, NewLine                                  int64
}

func changes(t *testing.T, db *sql.DB) []change {
	t.Helper()
	rows, err := db.Query(`SELECT change, row_key, coalesce(column_name, ''), coalesce(old_value, ''), coalesce(new_value, ''),
		old_report_id, new_report_id, old_source_line, coalesce(new_source_line, 0)
		FROM report_changes ORDER BY row_key, column_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []change
	for rows.Next() {
		var c change
		if err := rows.Scan(&c.Kind, &c.Key, &c.Column, &c.Old, &c.New, &c.OldReport, &c.NewReport, &c.OldLine, &c.NewLine); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestRegeneratedReportRecordsChanges: the month-to-date report is rebuilt
// every day. A newer generation that changes two rows already loaded (an
// amount, a state) and adds a day gives exactly two change records; loading
// it again adds none; a generation that drops a row records it as removed.
// The same holds when the rows are paired in parts of two.
func TestRegeneratedReportRecordsChanges(t *testing.T) {
	t.Run("one part", regeneratedReportRecordsChanges)
	t.Run("parts of two", func(t *testing.T) {
		transform.SetPairPart(t, 2)
		regeneratedReportRecordsChanges(t)
	})
}

func regeneratedReportRecordsChanges(t *testing.T) {
	gen1 := readTestdata(t, "sample/reports/payment_ops.csv")
	gen2 := replaceOnLine(t, gen1, "97eaa87c-a75d-44dd-b072-a561c3f10fb6", ",5541.98,", ",5541.89,")
	gen2 = replaceOnLine(t, gen2, "ed3b8ef7-b524-4ef7-bfba-9a50bc2821f4", ",CASH_PAYOUT,COMPLETED,", ",CASH_PAYOUT,FAILED,")
	gen2 = append(gen2, []byte("ACME202610020000006,0c1d2e3f-0000-4000-8000-000000000006,2026-10-02T09:00:00.000Z,"+
		"2026-10-02T09:00:20.000Z,2026-10-02T09:03:00.000Z,acme_usd@rn.us.ny.acme,Acme Bank,100.00,USD,,"+
		"acme_eur@rn.us.ny.acme,Acme Bank,92.00,EUR,,,,BOOK_TRANSFER,COMPLETED,A B,US1,C D,DE1,,\n")...)

	db := newDB(t)
	load(t, db, writeExtract(t, opsReport(t, "mtd-1002", "2026-10-01", "2026-10-01", gen1)))
	if got := changes(t, db); len(got) != 0 {
		t.Fatalf("first generation recorded changes: %v", got)
	}
	second := writeExtract(t, opsReport(t, "mtd-1003", "2026-10-01", "2026-10-02", gen2))
	st := load(t, db, second)
	want := []change{
		{Kind: "changed", Key: "97eaa87c-a75d-44dd-b072-a561c3f10fb6", Column: "sent_amount", Old: "5541.980000000000",
			New: "5541.890000000000", OldReport: "mtd-1002", NewReport: "mtd-1003", OldLine: 3, NewLine: 3},
		{Kind: "changed", Key: "ed3b8ef7-b524-4ef7-bfba-9a50bc2821f4", Column: "payment_state", Old: "COMPLETED",
			New: "FAILED", OldReport: "mtd-1002", NewReport: "mtd-1003", OldLine: 6, NewLine: 6},
	}
	if diff := cmp.Diff(want, changes(t, db)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if st.Changes() != 2 {
		t.Errorf("load stats count %d changes, want 2", st.Changes())
	}
	if st := load(t, db, second); st.Changes() != 0 || len(changes(t, db)) != 2 {
		t.Errorf("reloading the same generation recorded %d more changes", st.Changes())
	}

	gen3 := []byte(strings.Join(strings.Split(string(gen2), "\n")[:6], "\n") + "\n") // header and the first 5 payments
	load(t, db, writeExtract(t, opsReport(t, "mtd-1004", "2026-10-01", "2026-10-02", gen3)))
	var removed []string
	for _, c := range changes(t, db) {
		if c.Kind == "removed" {
			removed = append(removed, c.Key+" "+c.OldReport+">"+c.NewReport)
		}
	}
	wantRemoved := []string{"0c1d2e3f-0000-4000-8000-000000000006 mtd-1003>mtd-1004", "519f2bdd-e9bc-4466-85c4-8305765513a1 mtd-1003>mtd-1004"}
	if diff := cmp.Diff(wantRemoved, removed); diff != "" {
		t.Errorf("removed rows (-want +got):\n%s", diff)
	}

	// A payment listed twice, then once: its second copy is the one removed.
	first := strings.Split(string(gen3), "\n")[1]
	gen4 := append(append([]byte{}, gen3...), []byte(first+"\n")...)
	load(t, db, writeExtract(t, opsReport(t, "mtd-1005", "2026-10-01", "2026-10-02", gen4)))
	load(t, db, writeExtract(t, opsReport(t, "mtd-1006", "2026-10-01", "2026-10-02", gen3)))
	removed = nil
	for _, c := range changes(t, db) {
		if c.Kind == "removed" && c.NewReport == "mtd-1006" {
			removed = append(removed, fmt.Sprintf("%s line %d", c.Key, c.OldLine))
		}
	}
	if want := []string{strings.Split(first, ",")[1] + "#2 line 7"}; !slices.Equal(removed, want) {
		t.Errorf("removed rows of the twice-listed payment: %q, want %q", removed, want)
	}
}

// TestRegeneratedReconRecordsChangesByTransaction: RECON rows are keyed by
// payment and transaction. A newer generation that changes one amount of
// one transaction gives one change, on that transaction's row key, and a
// generation without a transaction records that row as removed.
func TestRegeneratedReconRecordsChangesByTransaction(t *testing.T) {
	recon := func(id string, body []byte) string {
		return writeExtract(t, rawFile{raw.File{Source: raw.SourceRecon, Format: raw.FormatCSV, Path: "reports/" + id + ".csv",
			Window: window(t, "2026-10-01", "2026-10-01"), Status: raw.StatusReady, ReportID: id,
			Request: "GET /v1/reports/download/" + id}, body})
	}
	gen1 := readTestdata(t, "sample/reports/recon.csv")
	const trade = "59e1f617-744f-4252-8251-2622d882d2c1"
	gen2 := replaceOnLine(t, gen1, trade, ",5650.60,", ",5650.61,")
	db := newDB(t)
	load(t, db, recon("recon-1", gen1))
	load(t, db, recon("recon-2", gen2))
	want := []change{{Kind: "changed", Key: "3a4c81e0-ebd5-4298-9bd3-f2d600e43638/" + trade, Column: "source_result_adjusted_amount",
		Old: "5650.600000000000", New: "5650.610000000000", OldReport: "recon-1", NewReport: "recon-2", OldLine: 3, NewLine: 3}}
	if diff := cmp.Diff(want, changes(t, db)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}

	var kept []string
	for _, l := range strings.SplitAfter(string(gen2), "\n") {
		if !strings.Contains(l, trade) {
			kept = append(kept, l)
		}
	}
	load(t, db, recon("recon-3", []byte(strings.Join(kept, ""))))
	got := changes(t, db)
	if len(got) != 2 || got[1].Kind != "removed" || got[1].Key != want[0].Key || got[1].OldReport != "recon-2" {
		t.Errorf("after a generation without the trade, changes %+v; want the trade's row removed from recon-2", got)
	}
}

// duplicates counts, per table, the rows beyond one per natural key.
func duplicates(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	keys := map[string]string{
		"payment_ops":        "network_payment_id",
		"recon_transactions": "network_payment_id, transaction_id",
		"statement_entries":  "account, transaction_id",
		"statements":         "account, start_datetime, end_datetime",
		"liquidations":       "liquidation_id",
		"liquidation_trades": "liquidation_id, trade_id",
		"trade_executions":   "liquidation_id, trade_id, execution_id",
		"payments":           "payment_id",
		"transfers":          "transfer_id",
		"balances":           "fetched_at, side, currency, account_name",
		"fees":               "fee_id",
		"quarantine":         "source, source_file, line, path",
	}
	out := map[string]int64{}
	for table, key := range keys {
		var n int64
		if err := db.QueryRow(`SELECT count(*) - count(DISTINCT (` + key + `)) FROM ` + table).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			out[table] = n
		}
	}
	return out
}

// TestOneRowReportReloaded: a report's first load into an empty table
// skips the comparison; a reload over a table of one row (rowid 0) still
// replaces it.
func TestOneRowReportReloaded(t *testing.T) {
	lines := strings.SplitAfter(string(readTestdata(t, "sample/reports/payment_ops.csv")), "\n")
	one := []byte(lines[0] + lines[1])
	db := newDB(t)
	for _, id := range []string{"mtd-1", "mtd-2"} {
		load(t, db, writeExtract(t, opsReport(t, id, "2026-10-01", "2026-10-01", one)))
		var n int
		var report string
		if err := db.QueryRow(`SELECT count(*), any_value(report_id) FROM payment_ops`).Scan(&n, &report); err != nil {
			t.Fatal(err)
		}
		if n != 1 || report != id {
			t.Errorf("after loading %s: %d rows of report %s, want 1 of %s", id, n, report, id)
		}
	}
}

// TestOverlappingRangesNeverDuplicate loads slices whose ranges overlap, in
// both orders: every natural key keeps one row.
func TestOverlappingRangesNeverDuplicate(t *testing.T) {
	ops := readTestdata(t, "sample/reports/payment_ops.csv")
	wider := append(append([]byte{}, ops...), []byte("ACME202609300000009,0c1d2e3f-0000-4000-8000-000000000009,2026-09-30T22:00:00.000Z,"+
		"2026-09-30T22:00:20.000Z,2026-09-30T22:03:00.000Z,acme_usd@rn.us.ny.acme,Acme Bank,100.00,USD,,"+
		"acme_eur@rn.us.ny.acme,Acme Bank,92.00,EUR,,,,BOOK_TRANSFER,COMPLETED,A B,US1,C D,DE1,,\n")...)
	day := writeExtract(t, opsReport(t, "ops-day", "2026-10-01", "2026-10-01", ops))
	span := writeExtract(t, opsReport(t, "ops-span", "2026-09-30", "2026-10-02", wider))
	// A report of the next day that lists again a payment quoted a second before midnight:
	// only its key says it is the same row.
	lines := strings.Split(string(ops), "\n")
	late := writeExtract(t, opsReport(t, "ops-late", "2026-10-02", "2026-10-02", []byte(lines[0]+"\n"+lines[6]+"\n")))
	if !strings.Contains(lines[6], "2026-10-01T23:59:01.588Z") {
		t.Fatalf("line 7 of the sample is not the payment quoted before midnight: %s", lines[6])
	}

	// Statements: the one-day window, then a two-day window with the same entries.
	src := "../testdata/load/sources"
	files, err := raw.ReadIndex(src)
	if err != nil {
		t.Fatal(err)
	}
	var stmtDay, stmtTwo []rawFile
	for _, f := range files {
		if f.Source != raw.SourceStatement {
			continue
		}
		body := readTestdata(t, "sources/"+f.Path)
		stmtDay = append(stmtDay, rawFile{f, body})
		g := f
		g.Window = window(t, "2026-10-01", "2026-10-02")
		g.Path = strings.Replace(f.Path, "2026-10-01_2026-10-01", "2026-10-01_2026-10-02", 1)
		stmtTwo = append(stmtTwo, rawFile{g, body})
	}
	for _, order := range [][]string{{day, late, span, src}, {span, day, late, src}} {
		db := newDB(t)
		for _, dir := range append(order, writeExtract(t, stmtTwo...), writeExtract(t, stmtDay...), src) {
			load(t, db, dir)
			if d := duplicates(t, db); len(d) != 0 {
				t.Fatalf("order %v: after loading %s: duplicate rows %v", order, dir, d)
			}
		}
		var nOps, entries int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM payment_ops), (SELECT count(*) FROM statement_entries)`).Scan(&nOps, &entries); err != nil {
			t.Fatal(err)
		}
		if nOps != 7 || entries != 2 {
			t.Errorf("order %v: %d payment_ops rows and %d statement entries, want 7 and 2", order, nOps, entries)
		}
	}
}

// TestSourceNotPulledKeepsItsRows: a liquidation or server API source that
// was not pulled (a FAILED file without a path) loads nothing and leaves the
// rows an earlier load brought; another list of the same source still loads.
func TestSourceNotPulledKeepsItsRows(t *testing.T) {
	src := "../testdata/load/sources"
	files, err := raw.ReadIndex(src)
	if err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	load(t, db, src)
	count := func() (n [2]int) {
		t.Helper()
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM liquidations), (SELECT count(*) FROM payments)`).Scan(&n[0], &n[1]); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	if before[0] == 0 || before[1] == 0 {
		t.Fatalf("the sources hold %v liquidations and payments", before)
	}
	w := window(t, "2026-10-01", "2026-10-02")
	failed := func(source string) rawFile {
		return rawFile{file: raw.File{Source: source, Format: raw.FormatJSON, Window: w, Status: raw.StatusFailed}}
	}
	var page rawFile // one page of the payments, loaded again beside a list that failed
	for _, f := range files {
		if f.Source == raw.SourcePayment && f.Page == 0 {
			page = rawFile{f, readTestdata(t, "sources/"+f.Path)}
		}
	}
	load(t, db, writeExtract(t, failed(raw.SourceLiquidation), failed(raw.SourcePayment), page))
	if after := count(); after != before {
		t.Errorf("liquidations and payments %v after a load that pulled neither, %v before", after, before)
	}
}

// paymentsPage is page n of a payments list of 2026-10-01 (prefix
// "modified_" for the MODIFIED_AT list of an older window) holding items.
func paymentsPage(t *testing.T, prefix string, n int, last bool, total int, items []map[string]any) rawFile {
	t.Helper()
	body, err := json.Marshal(map[string]any{"content": items, "first": n == 0, "last": last, "number": n,
		"totalElements": total})
	if err != nil {
		t.Fatal(err)
	}
	return rawFile{raw.File{Source: raw.SourcePayment, Format: raw.FormatJSON,
		Path: fmt.Sprintf("payments/%s2026-10-01_2026-10-01_p%04d.json", prefix, n), Window: window(t, "2026-10-01", "2026-10-01"),
		Status: raw.StatusReady, Request: "GET /v4/payments", Page: n}, body}
}

// TestPaymentOnTwoPagesKeepsTheNewerCopy: a payment listed on two pages of
// one load (a list that moved while it was read, or the EXECUTED_AT and
// MODIFIED_AT lists of an old window) keeps one row, the copy modified
// last, with that copy's children only; a load of distinct payments keeps
// every one with all its children.
func TestPaymentOnTwoPagesKeepsTheNewerCopy(t *testing.T) {
	var page struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(readTestdata(t, "sources/payments/2026-10-01_2026-10-01_p0000.json"), &page); err != nil {
		t.Fatal(err)
	}
	older := page.Content[0]
	newer := maps.Clone(older)
	newer["modified_at"], newer["payment_state"] = "2026-10-01T03:00:00.000Z", "RETURNED"
	results := older["execution_results"].([]any)
	if len(results) < 2 {
		t.Fatalf("the sample payment has %d execution results, want 2 or more", len(results))
	}
	newer["execution_results"] = results[:1]
	pageOf := func(n int, items ...map[string]any) rawFile {
		return paymentsPage(t, "", n, true, len(items), items)
	}
	for _, tc := range []struct {
		name     string
		pages    []rawFile
		payments int
		state    string
		results  int // execution results of the sample payment
	}{
		{"newer on the second page", []rawFile{pageOf(0, older, page.Content[1]), pageOf(1, newer)}, 2, "RETURNED", 1},
		{"newer on the first page", []rawFile{pageOf(0, newer), pageOf(1, older, page.Content[1])}, 2, "RETURNED", 1},
		{"each once", []rawFile{pageOf(0, older), pageOf(1, page.Content[1])}, 2, "COMPLETED", len(results)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB(t)
			load(t, db, writeExtract(t, tc.pages...))
			if d := duplicates(t, db); len(d) != 0 {
				t.Fatalf("duplicate rows %v", d)
			}
			var n, results int
			var state string
			if err := db.QueryRow(`SELECT (SELECT count(*) FROM payments), (SELECT payment_state FROM payments WHERE payment_id = $1),
				(SELECT count(*) FROM payment_execution_results WHERE payment_id = $1)`, older["payment_id"]).Scan(&n, &state, &results); err != nil {
				t.Fatal(err)
			}
			if n != tc.payments || state != tc.state || results != tc.results {
				t.Errorf("%d payments, the sample %s with %d execution results; want %d, %s, %d", n, state, results, tc.payments, tc.state, tc.results)
			}
		})
	}
}

// TestOldWindowPaymentsInBoundedMemory: an older window's two lists
// (EXECUTED_AT and MODIFIED_AT) bring each payment twice. Choosing the copy
// kept must not hold whole rows in DuckDB's memory: at a limit about the
// size of the staged copies, the load passes and keeps every payment once,
// the copy modified last, with that copy's children.
func TestOldWindowPaymentsInBoundedMemory(t *testing.T) {
	var page struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(readTestdata(t, "sources/payments/2026-10-01_2026-10-01_p0000.json"), &page); err != nil {
		t.Fatal(err)
	}
	const payments, perPage = 6000, 500
	sample := page.Content[0]
	results := len(sample["execution_results"].([]any))
	// The older copies are wide (a long internal id): the table keeps only
	// the newer, narrow ones, so the staged copies are what the memory holds.
	pad := strings.Repeat("x", 24000)
	var files []rawFile
	for list, prefix := range []string{"", "modified_"} {
		for p := 0; p < payments/perPage; p++ {
			items := make([]map[string]any, perPage)
			for i := range items {
				n := p*perPage + i
				item := maps.Clone(sample)
				item["payment_id"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
				if list == 0 {
					item["internal_id"] = fmt.Sprintf("%d-%s", n, pad)
				} else {
					item["modified_at"] = "2026-10-01T23:00:00.000Z"
				}
				items[i] = item
			}
			files = append(files, paymentsPage(t, prefix, p, p == payments/perPage-1, payments, items))
		}
	}
	db := newDB(t)
	// The staged copies take about 150 MB: whole rows ranked needed more
	// than 192 MB here, the rows ranked by their ids at most 128.
	for _, q := range []string{`SET memory_limit = '160MB'`, `SET threads = 2`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	load(t, db, writeExtract(t, files...))
	if d := duplicates(t, db); len(d) != 0 {
		t.Fatalf("duplicate rows %v", d)
	}
	var n, modified, children int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE modified_at = TIMESTAMPTZ '2026-10-01 23:00:00+00'),
		(SELECT count(*) FROM payment_execution_results) FROM payments`).Scan(&n, &modified, &children); err != nil {
		t.Fatal(err)
	}
	if n != payments || modified != payments || children != payments*results {
		t.Errorf("%d payments, %d of them the copy modified last, %d execution results; want %d, %d, %d",
			n, modified, children, payments, payments, payments*results)
	}
}
