package sandbox_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"recon/extract"
	"recon/extract/sandbox"
)

// TestWalletTruth checks the served wallet data against the truth: every
// wallet kind is injected, and the balances at the ends of the generated
// days differ from the confirmed transactions between them (DESIGN.md §9)
// exactly for the wallets the truth names for wallet_balance_drift.
func TestWalletTruth(t *testing.T) {
	e := start(t, sandbox.Config{})
	tok := e.token(t)
	w := window(t, "2026-10-01", "2026-10-03")
	perRule := map[string]int{}
	for _, b := range e.s.Truth().Breaks {
		if strings.HasPrefix(b.RuleID, "wallet_") {
			perRule[b.RuleID]++
		}
	}
	want := map[string]int{"wallet_activity_while_frozen": 3, "wallet_balance_drift": 2, "wallet_limit_breach": 5,
		"wallet_sign_for_limit_missing": 3}
	if diff := gocmp.Diff(want, perRule); diff != "" {
		t.Errorf("wallet breaks per rule (-want +got):\n%s", diff)
	}
	var drifted []string
	for _, vw := range e.s.Wallets() {
		vault, wallet, _ := strings.Cut(vw, "/")
		base := sandbox.WalletPrefix + extract.PathWalletVaults + vault + extract.PathWallets + wallet
		at := func(q string) map[[2]string]decimal.Decimal {
			resp, b := e.call(t, "GET", base+"/balances?as_of="+q, tok, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("%s balances: %d %s", vw, resp.StatusCode, b)
			}
			m := map[[2]string]decimal.Decimal{}
			for _, x := range decode(t, b)["balances"].([]any) {
				bal := x.(map[string]any)
				m[[2]string{bal["symbol"].(string), bal["blockchain"].(string)}] = dec(t, bal["quantity"])
			}
			return m
		}
		start, end := at(stamp(w.Start())), at(stamp(w.End()))
		txs := e.list(t, tok, base+"/transactions?start_date="+stamp(w.Start())+"&end_date="+stamp(w.End()), "content", 100)
		moved := map[[2]string]decimal.Decimal{}
		for _, tx := range txs {
			c, _ := tx["confirmed_at"].(string)
			if tx["status"] != "CONFIRMED" || c == "" || c >= stamp(w.End()) {
				continue
			}
			k := [2]string{tx["symbol"].(string), tx["blockchain"].(string)}
			if tx["type"] == "DEPOSIT" {
				moved[k] = moved[k].Add(dec(t, tx["quantity"]))
				continue
			}
			moved[k] = moved[k].Sub(dec(t, tx["quantity"]))
			if tx["network_fee"] != nil {
				f := [2]string{tx["network_fee_symbol"].(string), k[1]}
				moved[f] = moved[f].Sub(dec(t, tx["network_fee"]))
			}
		}
		keys := map[[2]string]bool{}
		for _, m := range []map[[2]string]decimal.Decimal{start, end, moved} {
			for k := range m {
				keys[k] = true
			}
		}
		for k := range keys {
			if !end[k].Sub(start[k]).Equal(moved[k]) {
				drifted = append(drifted, vw)
			}
		}
	}
	var truth []string
	for _, b := range e.s.Truth().Breaks {
		if b.RuleID == "wallet_balance_drift" {
			truth = append(truth, b.Account)
		}
	}
	slices.Sort(drifted)
	slices.Sort(truth)
	if diff := gocmp.Diff(truth, drifted); diff != "" {
		t.Errorf("drifting wallets (-truth +served):\n%s", diff)
	}
	// A blockchain is refused for the XRP wallet, accepted for an EVM one.
	resp, b := e.call(t, "GET", sandbox.WalletPrefix+"/v2/vaults/v-custody/wallets/w-xrp/balances?blockchain=ARBITRUM", tok, nil)
	if resp.StatusCode != 400 || decode(t, b)["errorCode"] != "BLOCKCHAIN_NOT_SUPPORTED" {
		t.Errorf("XRP wallet with a blockchain: %d %s", resp.StatusCode, b)
	}
	resp, b = e.call(t, "GET", sandbox.WalletPrefix+"/v2/vaults/v-treasury/wallets/w-ops/balances?blockchain=ARBITRUM", tok, nil)
	if resp.StatusCode != 200 {
		t.Errorf("EVM wallet with a blockchain: %d %s", resp.StatusCode, b)
	}
	// Limits come in both namings, with every matcher kind.
	kinds := map[string]bool{}
	namings := map[string]bool{}
	for _, vw := range e.s.Wallets() {
		vault, wallet, _ := strings.Cut(vw, "/")
		resp, b := e.call(t, "GET", sandbox.WalletPrefix+extract.PathWalletVaults+vault+extract.PathWallets+wallet+extract.PathWalletLimits, tok, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("limits: %d %s", resp.StatusCode, b)
		}
		var limits []map[string]any
		if err := json.Unmarshal(b, &limits); err != nil {
			t.Fatal(err)
		}
		for _, l := range limits {
			naming := "snake"
			if l["limitType"] != nil {
				naming = "camel"
			}
			namings[naming] = true
			for _, m := range l["matchers"].([]any) {
				kinds[m.(map[string]any)["type"].(string)] = true
			}
		}
	}
	if len(kinds) != 5 || len(namings) != 2 {
		t.Errorf("matcher kinds %v, namings %v", kinds, namings)
	}
}
