package pipeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/rules"
)

// TestGaps: a FAILED report becomes a gap in its table over its window, a
// liquidation or server API source not pulled a gap in each table it loads
// (once, however many of its lists failed); a READY or EMPTY report, and
// statements, do not.
func TestGaps(t *testing.T) {
	w1 := raw.Window{From: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)}
	w2 := raw.Window{From: w1.To.AddDate(0, 0, 1), To: w1.To.AddDate(0, 0, 5)}
	files := []raw.File{
		{Source: raw.SourcePaymentOps, Status: raw.StatusReady, Window: w1},
		{Source: raw.SourceRecon, Status: raw.StatusFailed, Window: w1},
		{Source: raw.SourceRecon, Status: raw.StatusEmpty, Window: w2},
		{Source: raw.SourceFailureConversion, Status: raw.StatusFailed, Window: w2},
		{Source: raw.SourceStatement, Status: raw.StatusReady, Window: w1, Account: "a@b"},
		{Source: raw.SourceLiquidation, Status: raw.StatusFailed, Window: w2},
		{Source: raw.SourcePayment, Status: raw.StatusReady, Window: w2, Path: "payments/x_p0000.json"},
		{Source: raw.SourcePayment, Status: raw.StatusFailed, Window: w2},
		{Source: raw.SourcePayment, Status: raw.StatusFailed, Window: w2},
		{Source: raw.SourceBalance, Status: raw.StatusFailed, Window: w1},
	}
	want := []rules.Gap{{Table: "recon_transactions", Window: w1}, {Table: "failure_conversions", Window: w2},
		{Table: "liquidations", Window: w2}, {Table: "liquidation_trades", Window: w2}, {Table: "trade_executions", Window: w2},
		{Table: "payments", Window: w2},
		// the payments' child tables (fees, execution results, quote elements, user_info) share their gaps
		{Table: "payment_fees", Window: w2}, {Table: "payment_execution_results", Window: w2},
		{Table: "payment_quote_elements", Window: w2}, {Table: "payment_user_info", Window: w2},
		{Table: "balances", Window: w1}}
	if diff := cmp.Diff(want, gaps(files)); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
}
