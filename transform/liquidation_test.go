package transform_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"recon/transform"
)

// TestLiquidationPagesLoadFirstOccurrence: a liquidation raw file may be a
// list page (testdata/load/liquidation_pages). Of its items, one that
// carries its trade_requests is loaded at its id's first occurrence, with
// the page and its place as provenance; a summary is skipped (its detail
// file loads it, even when a later page repeats it whole); a later repeat
// of an id is skipped; a malformed item is quarantined with its page and
// path, never dropped.
func TestLiquidationPagesLoadFirstOccurrence(t *testing.T) {
	db := newDB(t)
	st := load(t, db, "../testdata/load/liquidation_pages")
	const p0, p1 = "liquidations/2026-10-01_2026-10-02_p0000.json", "liquidations/2026-10-01_2026-10-02_p0001.json"
	id := func(n int) string { return fmt.Sprintf("5e1a0000-0000-4000-8000-0000000000%02d", n) }
	query := func(q string) []string {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var a, b, c, d string
			if err := rows.Scan(&a, &b, &c, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, a+" "+b+" "+c+" "+d)
		}
		return out
	}
	got := query(`SELECT liquidation_id, status, source_file, source_line::VARCHAR FROM liquidations ORDER BY liquidation_id`)
	want := []string{
		id(1) + " COMPLETED " + p0 + " 1",                    // not the FAILED repeat on page 1
		id(2) + " CREATED liquidations/" + id(2) + ".json 1", // the summary's detail, not its whole repeat on page 1
		id(4) + " COMPLETED " + p1 + " 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("liquidations\n%q\nwant\n%q", got, want)
	}
	got = query(`SELECT record_key, source_file, line::VARCHAR || ' ' || path, reason FROM quarantine ORDER BY source_file, line`)
	want = []string{
		id(3) + " " + p0 + " 3 $.results[2] bad decimal in destination_amount: abc (not a decimal)",
		id(4) + " " + p1 + " 2 $.results[1].trade_requests[1] bad decimal in amount: x (not a decimal)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("quarantine\n%q\nwant\n%q", got, want)
	}
	got = query(`SELECT liquidation_id, trade_id, source_file, source_line::VARCHAR FROM liquidation_trades ORDER BY trade_id`)
	if len(got) != 3 || got[2] != id(4)+" 5e1a0004-0000-4000-8000-000000000001 "+p1+" 1" {
		t.Errorf("trades %q, want two of %s and the good one of %s", got, id(1), id(4))
	}
	// The manifest counts a page's items (repeats and summaries too), not its rows.
	records := map[string]string{}
	for _, f := range st.Files {
		n, ok := f.Records()
		records[f.File.Path] = fmt.Sprint(n, ok)
	}
	if want := map[string]string{p0: "3 true", p1: "3 true", "liquidations/" + id(2) + ".json": "0 false"}; !maps.Equal(records, want) {
		t.Errorf("records %v, want %v", records, want)
	}
	if st.Quarantined() != 2 {
		t.Errorf("%d quarantined, want 2", st.Quarantined())
	}
}

func TestLiquidationPageShapes(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		page       bool
		items      int
		err        string
	}{
		{"one liquidation", `{"id": "l-1", "status": "COMPLETED"}`, false, 0, ""},
		{"one liquidation that names results", `{"id": "l-1", "results": []}`, false, 0, ""},
		{"a page", `{"results": [{"id": "a"}, {"id": "b"}], "page": 0}`, true, 2, ""},
		{"an empty page", `{"results": []}`, true, 0, ""},
		{"results not an array", `{"results": {"id": "a"}}`, true, 0, "results is not an array"},
		{"results null", `{"results": null}`, true, 0, "results is not an array"},
		{"not an object", `[{"id": "a"}]`, false, 0, ""},
		{"neither id nor results", `{"status": "COMPLETED"}`, false, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, page, err := transform.LiquidationPage([]byte(tc.body))
			if page != tc.page || len(items) != tc.items {
				t.Errorf("page %v with %d items, want %v with %d", page, len(items), tc.page, tc.items)
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}
