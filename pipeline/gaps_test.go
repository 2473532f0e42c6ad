package pipeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract"
	"recon/rules"
)

// TestGaps: a FAILED report becomes a gap in its table over its window; a
// READY or EMPTY one, and statements, do not.
func TestGaps(t *testing.T) {
	w1 := extract.Window{From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)}
	w2 := extract.Window{From: w1.To.AddDate(0, 0, 1), To: w1.To.AddDate(0, 0, 5)}
	files := []extract.RawFile{
		{Source: extract.SourcePaymentOps, Status: extract.StatusReady, Window: w1},
		{Source: extract.SourceRecon, Status: extract.StatusFailed, Window: w1},
		{Source: extract.SourceRecon, Status: extract.StatusEmpty, Window: w2},
		{Source: extract.SourceFailureConversion, Status: extract.StatusFailed, Window: w2},
		{Source: extract.SourceStatement, Status: extract.StatusReady, Window: w1, Account: "a@b"},
	}
	want := []rules.Gap{{Table: "recon_transactions", Window: w1}, {Table: "failure_conversions", Window: w2}}
	if diff := cmp.Diff(want, gaps(files)); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
}
