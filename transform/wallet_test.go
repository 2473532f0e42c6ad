package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon/extract/raw"
	"recon/transform"
)

// walletRaw writes one wallet's raw files into dir and returns their index.
func walletRaw(t *testing.T, dir string, files map[string]string) []raw.File {
	t.Helper()
	w, _ := raw.ParseWindow("2026-10-01", "2026-10-01")
	var out []raw.File
	for _, name := range []string{"wallet.json", "balances_20261001T000000000Z.json", "balances_20261002T000000000Z.json",
		"transactions_2026-10-01_2026-10-01_p0000.json", "limits.json"} {
		p := "wallets/v1/w1/" + name
		if err := os.MkdirAll(filepath.Join(dir, "wallets/v1/w1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, raw.File{Source: raw.SourceWallet, Format: raw.FormatJSON, Status: raw.StatusReady,
			Window: w, Account: "v1/w1", Path: p, Request: "GET test"})
	}
	return out
}

var walletFiles = map[string]string{
	"wallet.json": `{"wallet_id":"w1","vault_id":"v1","address":"0xAbC","kind":"EVM","frozen_chains":["AVALANCHE"],"label":"ops"}`,
	"balances_20261001T000000000Z.json": `{"wallet_id":"w1","as_of":"2026-10-01T00:00:00.000Z","balances":[
		{"symbol":"eth","blockchain":"ethereum","quantity":"1.000000000000000001","fiat_value":"2500.00","fiat_currency":"USD","origin_chain":"ETHEREUM"}]}`,
	"balances_20261002T000000000Z.json": `{"wallet_id":"w1","as_of":"2026-10-02T00:00:00.000Z","balances":[]}`,
	"transactions_2026-10-01_2026-10-01_p0000.json": `{"content":[
		{"transaction_id":"t1","type":"TRANSFER","status":"CONFIRMED","symbol":"USDC","quantity":"600","blockchain":"BASE",
		 "destination_address":"0xCP","initiator":{"type":"USER","id":"u1"},"transaction_type":"PAYOUT",
		 "network_fee":"0.000000000000000007","network_fee_symbol":"ETH","created_at":"2026-10-01T10:00:00.000Z","confirmed_at":"2026-10-01T10:00:30.000Z"},
		{"transaction_id":"t2","type":"TRANSFER","status":"PENDING","symbol":"USDC","quantity":"500","blockchain":"BASE",
		 "destination_address":"0xcp","initiator":{"type":"API_CREDENTIAL","id":"c1"},"created_at":"2026-10-01T11:00:00.000Z"},
		{"transaction_id":"t3","type":"TRANSFER","status":"CONFIRMED","symbol":"ETH","quantity":"0.0000000000000000001","blockchain":"BASE",
		 "created_at":"2026-10-01T12:00:00.000Z"}],"last":true,"number":0,"totalElements":3}`,
	"limits.json": `[
		{"limitId":"day","limitType":"PER_DAY","limitQty":"1000","symbol":"USDC","matchers":[{"type":"COUNTERPARTY","value":"0xCP"}]},
		{"limit_id":"tx","limit_type":"PER_TX","limit_qty":"550","symbol":"USDC","blockchain":"BASE"},
		{"limit_type":"PER_WEEK","limit_qty":"5","symbol":"USDC"},
		{"limit_id":"two","limitType":"PER_TX","limit_qty":"1","symbol":"USDC","matchers":[{"type":"USER","value":"u1"},{"type":"API_CREDENTIAL","value":"c1"}]},
		{"limit_id":"clash","limitType":"PER_TX","limit_type":"PER_DAY","limit_qty":"1","symbol":"USDC"}]`,
}

// TestLoadWallet loads one wallet's raw files: 18-decimal quantities kept
// exact, an empty snapshot kept as one row, a quantity past 18 decimals and
// a limit whose two namings disagree quarantined, limits in both namings
// with an unknown type kept, the issues and the trace derived; a reload
// replaces the slice.
func TestLoadWallet(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	files := walletRaw(t, dir, walletFiles)
	for range 2 { // the second load replaces the first
		if _, err := transform.NewLoader(db, dir, "r1", nil).Load(context.Background(), files); err != nil {
			t.Fatal(err)
		}
	}
	q := func(query string) []string {
		t.Helper()
		rows, err := db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{`SELECT vault_id || ' ' || wallet_id || ' ' || kind || ' ' || CAST(frozen_chains AS VARCHAR) || ' ' || CAST(extra AS VARCHAR) FROM wallets`,
			[]string{`v1 w1 EVM [AVALANCHE] {"label":"ops"}`}},
		{`SELECT CAST(as_of AS VARCHAR) || ' ' || coalesce(symbol, '-') || ' ' || coalesce(blockchain, '-') || ' ' || coalesce(CAST(quantity AS VARCHAR), '-')
			FROM wallet_balances ORDER BY as_of`,
			[]string{"2026-10-01 00:00:00+00 ETH ETHEREUM 1.000000000000000001", "2026-10-02 00:00:00+00 - - -"}},
		{`SELECT transaction_id || ' ' || status || ' ' || CAST(quantity AS VARCHAR) || ' ' || coalesce(initiator_type, '-') || ' ' ||
			coalesce(initiator_id, '-') || ' ' || coalesce(CAST(network_fee AS VARCHAR), '-') FROM wallet_transactions ORDER BY 1`,
			[]string{"t1 CONFIRMED 600.000000000000000000 USER u1 0.000000000000000007", "t2 PENDING 500.000000000000000000 API_CREDENTIAL c1 -"}},
		{`SELECT record_key || ': ' || reason FROM quarantine ORDER BY 1`,
			[]string{"clash: two fields give limit_type different values: PER_DAY and PER_TX", "t3: bad decimal in quantity: 0.0000000000000000001 (more than 18 decimals)"}},
		{`SELECT limit_id || ' ' || coalesce(limit_type, '-') || ' ' || CAST(limit_qty AS VARCHAR) FROM wallet_limits ORDER BY 1`,
			[]string{"#3 PER_WEEK 5.000000000000000000", "day PER_DAY 1000.000000000000000000", "two PER_TX 1.000000000000000000",
				"tx PER_TX 550.000000000000000000"}},
		{`SELECT limit_id || ' ' || matcher_type || '=' || matcher_value FROM wallet_limit_matchers ORDER BY 1`,
			[]string{"day COUNTERPARTY=0xCP", "two API_CREDENTIAL=c1", "two USER=u1"}},
		{`SELECT limit_id || ': ' || issue FROM wallet_limit_issues`,
			[]string{"#3: unknown limit type PER_WEEK: kept, not checked",
				"two: invalid configuration: 2 initiator matchers (API_CREDENTIAL=c1, USER=u1), at most one is allowed"}},
		{`SELECT transaction_id || ' ' || limit_id || ' ' || CAST(day_total AS VARCHAR) || ' ' || matchers FROM wallet_limit_usage ORDER BY 1`,
			[]string{"t1 day 600.000000000000000000 COUNTERPARTY=0xCP", "t1 tx 600.000000000000000000 (none: general)",
				"t2 day 1100.000000000000000000 COUNTERPARTY=0xCP", "t2 tx 1100.000000000000000000 (none: general)"}},
		{`SELECT transaction_id || ' ' || CAST(len(limits) AS VARCHAR) || ' ' || CAST(list_transform(limits, x -> x.exceeded) AS VARCHAR) FROM wallet_trace ORDER BY 1`,
			[]string{"t1 2 [false, true]", "t2 2 [true, false]"}},
		{`SELECT CAST(count(*) AS VARCHAR) FROM source_files WHERE source = 'wallet'`, []string{"5"}},
	} {
		if diff := cmp.Diff(c.want, q(c.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", strings.Join(strings.Fields(c.query), " "), diff)
		}
	}
}

// TestLoadWalletRefusesAnotherWallet: a record for another wallet than the
// one asked for fails the load, naming both.
func TestLoadWalletRefusesAnotherWallet(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	bad := map[string]string{}
	for k, v := range walletFiles {
		bad[k] = v
	}
	bad["wallet.json"] = `{"wallet_id":"w2","vault_id":"v1"}`
	_, err := transform.NewLoader(db, dir, "r1", nil).Load(context.Background(), walletRaw(t, dir, bad))
	if err == nil || !strings.Contains(err.Error(), `the answer is for wallet "w2", not "w1"`) {
		t.Errorf("error %v", err)
	}
}
