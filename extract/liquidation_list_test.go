package extract_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"recon/extract"
	"recon/extract/raw"
	"recon/extract/sandbox"
)

// TestLiquidationsFromWholeListNeedNoDetail: when the list's items carry
// their trade_requests, no GET /liquidations/{id} is made (DESIGN §3), and
// the raw files hold the same records as when every item is a summary and
// each is fetched whole.
func TestLiquidationsFromWholeListNeedNoDetail(t *testing.T) {
	w := window(t, "2026-10-01", "2026-10-03")
	pull := func(summaries bool) (map[string][]byte, map[string]int) {
		n := newNetwork(t, sandbox.Faults{LiquidationSummaries: summaries})
		dir := t.TempDir()
		res, err := n.client.Extract(t.Context(), extract.Request{Reports: w, ReportTypes: []string{raw.ReportPaymentOps}, Liquidations: w}, dir)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
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
			var c bytes.Buffer
			if err := json.Compact(&c, b); err != nil {
				t.Fatal(err)
			}
			files[f.Path] = c.Bytes()
		}
		return files, n.sb.Requests()
	}
	whole, wreq := pull(false)
	summ, sreq := pull(true)
	if len(whole) < 10 {
		t.Fatalf("%d liquidations, want a few dozen", len(whole))
	}
	// A liquidation still CREATED has no trade requests: its item lacks the
	// field in both shapes, and it alone is fetched whole.
	withoutTrades := 0
	for _, b := range whole {
		if !bytes.Contains(b, []byte(`"trade_requests":`)) {
			withoutTrades++
		}
	}
	if got := wreq["GET /liquidations/{id}"]; got != withoutTrades {
		t.Errorf("whole list: %d detail requests, want %d (the items without trade_requests)", got, withoutTrades)
	}
	if got := sreq["GET /liquidations/{id}"]; got != len(summ) {
		t.Errorf("summaries: %d detail requests, want one per liquidation (%d)", got, len(summ))
	}
	if len(whole) != len(summ) {
		t.Fatalf("%d liquidations from whole items, %d from details", len(whole), len(summ))
	}
	for p, b := range summ {
		if !bytes.Equal(whole[p], b) {
			t.Errorf("%s differs between the list item and the detail:\n%s\n%s", p, whole[p], b)
		}
	}
	t.Logf("%d liquidations: %d detail requests from whole items, %d from summaries", len(whole),
		wreq["GET /liquidations/{id}"], sreq["GET /liquidations/{id}"])
}
