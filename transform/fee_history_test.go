package transform_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/transform"
)

// loadFees loads one fee configuration snapshot fetched at (zero: no time in the index).
func loadFees(t *testing.T, dir string, at time.Time, fees ...map[string]any) {
	t.Helper()
	page, _ := json.Marshal(map[string]any{"content": fees, "first": true, "last": true, "number": 0,
		"size": 100, "totalElements": len(fees), "totalPages": 1})
	if err := os.MkdirAll(filepath.Join(dir, "fees"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fees", "p0000.json"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := raw.WriteIndex(dir, []raw.File{{Source: raw.SourceFee, Format: raw.FormatJSON, Path: "fees/p0000.json",
		Status: raw.StatusReady, FetchedAt: at, Request: "test"}}); err != nil {
		t.Fatal(err)
	}
}

func fee(id, value string) map[string]any {
	return map[string]any{"feeId": id, "value": json.Number(value), "currency_code": "USD", "role_type": "SENDING",
		"payment_type": "REGULAR", "node_type": "INITIAL", "fee_type": "PERCENTAGE", "partner_name": "rn.us.ny.acme",
		"account_name": "acme_usd", "fee_category": "NONE"}
}

// TestFeeHistoryKeepsEachVersion: each fees snapshot replaces the fees
// table, and fee_history keeps every version with the times it was in force:
// a changed fee ends its version and starts a new one, a removed fee ends,
// an unchanged one runs on; a snapshot without a time, or older than the
// history (a replay), changes no dates.
func TestFeeHistoryKeepsEachVersion(t *testing.T) {
	db := newDB(t)
	t1 := time.Date(2026, 10, 1, 6, 0, 0, 0, time.UTC)
	t2 := t1.Add(24 * time.Hour)
	step := func(name string, at time.Time, fees ...map[string]any) {
		dir := filepath.Join(t.TempDir(), name)
		loadFees(t, dir, at, fees...)
		files, err := raw.ReadIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := transform.NewLoader(db, dir, "r-"+name, nil).Load(t.Context(), files); err != nil {
			t.Fatal(err)
		}
	}
	history := func() string {
		return strings.Join(queryStrings(t, db, `SELECT fee_id || ' ' || CAST(value AS DECIMAL(9,2)) || ' '
			|| strftime(valid_from, '%d %H:%M') || '..' || coalesce(strftime(valid_to, '%d %H:%M'), '') || ' ' || run_id
			FROM fee_history ORDER BY fee_id, valid_from`), "\n")
	}
	step("a", t1, fee("f-1", "0.25"), fee("f-2", "0.50"), fee("f-3", "1"))
	step("b", t2, fee("f-1", "0.25"), fee("f-2", "0.40"), fee("f-4", "2"))
	want := strings.Join([]string{
		"f-1 0.25 01 06:00.. r-a",
		"f-2 0.50 01 06:00..02 06:00 r-a",
		"f-2 0.40 02 06:00.. r-b",
		"f-3 1.00 01 06:00..02 06:00 r-a",
		"f-4 2.00 02 06:00.. r-b",
	}, "\n")
	if diff := cmp.Diff(want, history()); diff != "" {
		t.Fatalf("after two snapshots (-want +got):\n%s", diff)
	}
	step("replay", t1, fee("f-1", "0.25"), fee("f-2", "0.50"), fee("f-3", "1"))
	if diff := cmp.Diff(want, history()); diff != "" {
		t.Errorf("a replay of the older snapshot changed the history (-want +got):\n%s", diff)
	}
	step("undated", time.Time{}, fee("f-1", "0.30"), fee("f-2", "0.40"), fee("f-4", "2"))
	want = strings.Replace(want, "f-1 0.25 01 06:00.. r-a", "f-1 0.25 01 06:00..02 06:00 r-a\nf-1 0.30 02 06:00.. r-undated", 1)
	if diff := cmp.Diff(want, history()); diff != "" {
		t.Errorf("an undated snapshot (-want +got):\n%s", diff)
	}
}
