package transform

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
)

// TestEverySourceIsRegistered: each raw source has one registration, which
// gives its tables; the tables keep the order known_values had.
func TestEverySourceIsRegistered(t *testing.T) {
	all := []string{raw.SourcePaymentOps, raw.SourceRecon, raw.SourceFailureConversion, raw.SourceStatement,
		raw.SourceLiquidation, raw.SourcePayment, raw.SourcePaymentLabel, raw.SourceTransfer, raw.SourceBalance, raw.SourceFee, raw.SourceWallet,
		raw.SourceNotification, raw.SourceNotificationReceipt}
	var names []string
	for _, s := range Sources {
		names = append(names, s.Name)
		if s.Slice == nil || s.Load == nil || len(s.Tables)+len(s.Plain) == 0 {
			t.Errorf("source %s: registration lacks a slice key, a load or a table", s.Name)
		}
	}
	slices.Sort(all)
	slices.Sort(names)
	if diff := cmp.Diff(all, names); diff != "" {
		t.Errorf("registered sources (-raw +registered):\n%s", diff)
	}
	var tables []string
	for _, tb := range allTables() {
		tables = append(tables, tb.Name)
	}
	want := []string{"payment_ops", "recon_transactions", "failure_conversions", "statement_entries", "liquidations",
		"liquidation_trades", "trade_executions", "payments", "payment_fees", "payment_execution_results",
		"payment_quote_elements", "payment_user_info", "payment_label_sweep", "transfers", "balances", "fees",
		"wallets", "wallet_balances", "wallet_transactions", "wallet_limits", "wallet_limit_matchers"}
	if diff := cmp.Diff(want, tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	if got := TablesOf(raw.SourceStatement); !slices.Equal(got, []string{"statements", "statement_entries"}) {
		t.Errorf("statement tables %v", got)
	}
	if got := TablesOf(raw.SourceLiquidation); !slices.Equal(got, []string{"liquidations", "liquidation_trades", "trade_executions"}) {
		t.Errorf("liquidation tables %v", got)
	}
}
