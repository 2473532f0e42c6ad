package extract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
)

// TestLiquidationsFromWholeListNeedNoDetail: when the list's items carry
// their trade_requests, no GET /liquidations/{id} is made (DESIGN §3): each
// list page is one raw file, and only the items without trade_requests get
// their own file; the raw files hold the same records as when every item is
// a summary and each is fetched whole into its own file.
func TestLiquidationsFromWholeListNeedNoDetail(t *testing.T) {
	w := window(t, "2026-10-01", "2026-10-03")
	type pulled struct {
		records       map[string][]byte // by id, compacted
		pages, detail int               // raw files of each kind
		requests      map[string]int
	}
	pull := func(summaries bool) pulled {
		n := newNetwork(t, sandbox.Faults{LiquidationSummaries: summaries})
		dir := t.TempDir()
		res, err := n.client.Extract(t.Context(), extract.Request{Reports: w, ReportTypes: []string{raw.ReportPaymentOps}, Liquidations: w}, dir)
		if err != nil {
			t.Fatal(err)
		}
		p := pulled{records: map[string][]byte{}, requests: n.sb.Requests()}
		seen := map[string]bool{}
		for _, f := range res.Files {
			if f.Source != raw.SourceLiquidation {
				continue
			}
			if f.Status != raw.StatusReady {
				t.Fatalf("file %+v", f)
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(f.Request, extract.PathLiquidations+"?") {
				p.pages++
				if want := fmt.Sprintf("liquidations/%s_%s_p%04d.json", w.From.Format(raw.DateLayout), w.To.Format(raw.DateLayout), f.Page); f.Path != want {
					t.Errorf("page %d written to %s, want %s", f.Page, f.Path, want)
				}
			} else {
				p.detail++
			}
			for _, r := range liquidationRecords(t, b, seen) {
				var c bytes.Buffer
				if err := json.Compact(&c, r); err != nil {
					t.Fatal(err)
				}
				var v struct {
					ID string `json:"id"`
				}
				mustDecode(t, r, &v)
				if _, dup := p.records[v.ID]; dup {
					t.Errorf("liquidation %s in two raw files", v.ID)
				}
				p.records[v.ID] = c.Bytes()
			}
		}
		return p
	}
	whole, summ := pull(false), pull(true)
	if len(whole.records) < 10 {
		t.Fatalf("%d liquidations, want a few dozen", len(whole.records))
	}
	// A liquidation still CREATED has no trade requests: its item lacks the
	// field in both shapes, and it alone is fetched whole, into its own file.
	withoutTrades := 0
	for _, b := range whole.records {
		if !bytes.Contains(b, []byte(`"trade_requests":`)) {
			withoutTrades++
		}
	}
	listPages := whole.requests["GET /liquidations"]
	if whole.pages != listPages || summ.pages != summ.requests["GET /liquidations"] {
		t.Errorf("page files %d and %d, want one per list page (%d and %d)", whole.pages, summ.pages, listPages, summ.requests["GET /liquidations"])
	}
	if got := whole.requests["GET /liquidations/{id}"]; got != withoutTrades || whole.detail != withoutTrades {
		t.Errorf("whole list: %d detail requests and %d detail files, want %d (the items without trade_requests)", got, whole.detail, withoutTrades)
	}
	if got := summ.requests["GET /liquidations/{id}"]; got != len(summ.records) || summ.detail != len(summ.records) {
		t.Errorf("summaries: %d detail requests and %d detail files, want one per liquidation (%d)", got, summ.detail, len(summ.records))
	}
	if len(whole.records) != len(summ.records) {
		t.Fatalf("%d liquidations from whole items, %d from details", len(whole.records), len(summ.records))
	}
	for id, b := range summ.records {
		if !bytes.Equal(whole.records[id], b) {
			t.Errorf("%s differs between the list item and the detail:\n%s\n%s", id, whole.records[id], b)
		}
	}
	t.Logf("%d liquidations: %d raw files (%d pages) and %d detail requests from whole items, %d files from summaries",
		len(whole.records), whole.pages+whole.detail, whole.pages, whole.requests["GET /liquidations/{id}"], summ.pages+summ.detail)
}

// liquidationRecords are the whole liquidations a raw liquidation file
// holds, read as the loader reads them: a detail file is one; a list page
// gives each item that carries its trade_requests at its id's first
// occurrence (seen, across the pages in order).
func liquidationRecords(t *testing.T, b []byte, seen map[string]bool) []json.RawMessage {
	t.Helper()
	var page struct {
		ID      *string           `json:"id"`
		Results []json.RawMessage `json:"results"`
	}
	mustDecode(t, b, &page)
	if page.ID != nil || page.Results == nil {
		return []json.RawMessage{b}
	}
	var out []json.RawMessage
	for _, item := range page.Results {
		var v struct {
			ID            string          `json:"id"`
			TradeRequests json.RawMessage `json:"trade_requests"`
		}
		mustDecode(t, item, &v)
		if seen[v.ID] {
			continue
		}
		seen[v.ID] = true
		if tr := bytes.TrimSpace(v.TradeRequests); len(tr) > 0 && tr[0] == '[' {
			out = append(out, item)
		}
	}
	return out
}
