package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// TestLabelSweepReplacedWhole: each load of the label sweep replaces
// payment_label_sweep whole, so a payment whose label was removed since the
// last sweep (absent from the new pages) leaves the table; payments are
// untouched by the sweep.
func TestLabelSweepReplacedWhole(t *testing.T) {
	db := newDB(t)
	page := func(ids ...string) []byte {
		var items []string
		for _, id := range ids {
			items = append(items, fmt.Sprintf(`{"payment_id":%q,"payment_state":"FAILED","contract":{"created_at":"2026-08-10T09:00:00.000Z"},`+
				`"internal_info":{"labels":[{"label":"OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY"}]}}`, id))
		}
		return fmt.Appendf(nil, `{"content":[%s],"number":0,"last":true,"totalElements":%d}`, strings.Join(items, ","), len(ids))
	}
	sweep := func(ids ...string) string {
		return writeExtract(t, rawFile{raw.File{Source: raw.SourcePaymentLabel, Format: raw.FormatJSON, Status: raw.StatusReady,
			Window: window(t, "2026-10-01", "2026-10-01"), Path: "payment_labels/OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY_p0000.json"},
			page(ids...)})
	}
	load(t, db, sweep("p-kept", "p-removed"))
	load(t, db, sweep("p-kept"))
	got := queryStrings(t, db, `SELECT payment_id FROM payment_label_sweep ORDER BY ALL`)
	if diff := cmp.Diff([]string{"p-kept"}, got); diff != "" {
		t.Errorf("sweep after the label was removed (-want +got):\n%s", diff)
	}
	if n := queryStrings(t, db, `SELECT count(*) FROM payments`); n[0] != "0" {
		t.Errorf("the sweep loaded %s payments rows", n[0])
	}
}
