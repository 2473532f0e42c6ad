package transform

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"recon/extract/raw"
)

// The wallet service's tables (DESIGN.md §9): one slice per wallet, all its
// raw files of a run (record, balances snapshots, transaction pages, limits).
var (
	walletKeys         = []Column{{Name: "vault_id", Kind: Text, Required: true}, {Name: "wallet_id", Kind: Text, Required: true}}
	walletTxTypes      = []string{"TRANSFER", "DEPOSIT", "RAW"}
	walletTxStatuses   = []string{"PENDING", "CONFIRMED", "FAILED", "REJECTED"}
	walletLimitRenames = map[string]string{"limitType": "limit_type", "limitQty": "limit_qty", "limitId": "limit_id"}

	// Wallets are the wallet records (GET .../wallets/{wallet}).
	Wallets = Table{
		Name: "wallets", Source: raw.SourceWallet, Extra: true, Prov: ByRun,
		Columns: cols(walletKeys, text("address", "kind"), one("frozen_chains", Labels)),
		Key:     []string{"wallet_id"},
	}
	// WalletBalances are balances snapshots (GET .../balances?as_of=), one
	// row per (symbol, blockchain); a snapshot without balances is one row
	// whose symbol is null, so its as_of is kept.
	WalletBalances = Table{
		Name: "wallet_balances", Source: raw.SourceWallet, Extra: true, Prov: ByRun,
		Columns: cols(walletKeys, []Column{{Name: "as_of", Kind: Time, Required: true}},
			one("symbol", Currency), one("blockchain", Currency), one("quantity", Quantity),
			one("fiat_value", Amount), one("fiat_currency", Currency), one("origin_chain", Currency)),
		Key: []string{"as_of"},
	}
	// WalletTransactions are the transactions of a wallet (GET .../transactions).
	WalletTransactions = Table{
		Name: "wallet_transactions", Source: raw.SourceWallet, Extra: true, Prov: ByRun,
		Columns: cols(walletKeys, required("transaction_id"),
			[]Column{{Name: "type", Kind: Enum, Values: walletTxTypes, Required: true}, {Name: "status", Kind: Enum, Values: walletTxStatuses, Required: true}},
			one("symbol", Currency), one("quantity", Quantity), one("blockchain", Currency),
			text("source_address", "destination_address", "initiator_type", "initiator_id", "transaction_type", "sign_for", "tx_hash"),
			one("network_fee", Quantity), one("network_fee_symbol", Currency), one("created_at", Time), one("confirmed_at", Time)),
		Key:  []string{"transaction_id"},
		Keep: "_file DESC, _line DESC",
	}
	// WalletLimits are the limits of a wallet (GET .../policy-rules/limits);
	// limit_type is kept verbatim, known or not.
	WalletLimits = Table{
		Name: "wallet_limits", Source: raw.SourceWallet, Extra: true, Prov: ByRun,
		Columns: cols(walletKeys, required("limit_id"), text("limit_type"), one("limit_qty", Quantity),
			one("symbol", Currency), one("blockchain", Currency)),
		Key: []string{"limit_id"},
	}
	// WalletLimitMatchers are the matchers of the limits, one row each.
	WalletLimitMatchers = Table{
		Name: "wallet_limit_matchers", Source: raw.SourceWallet, Prov: ByRun,
		Columns: cols(walletKeys, required("limit_id"), required("matcher_type"), text("matcher_value")),
		Key:     []string{"limit_id"},
	}
	walletTables = []*Table{&Wallets, &WalletBalances, &WalletTransactions, &WalletLimits, &WalletLimitMatchers}
)

// walletFile is the kind of a wallet raw file, by its name (extract/wallet.go).
func walletFile(f raw.File) string {
	name := path.Base(f.Path)
	switch {
	case name == "wallet.json":
		return "wallet"
	case name == "limits.json":
		return "limits"
	case strings.HasPrefix(name, "balances_"):
		return "balances"
	case strings.HasPrefix(name, "transactions_"):
		return "transactions"
	}
	return ""
}

// loadWallet replaces one wallet's slice: its record, the balances
// snapshots brought (by as_of), its transactions (by id) and its limits
// and matchers (whole), with the quarantine rows of its window.
func (l *Loader) loadWallet(ctx context.Context, conn *sql.Conn, files []raw.File) ([]FileStats, error) {
	vw := files[0].Account
	vault, wallet, ok := strings.Cut(vw, "/")
	if !ok {
		return nil, fmt.Errorf("wallet files without a vault_id/wallet_id account (%q)", vw)
	}
	for _, f := range files {
		if f.Account != vw || walletFile(f) == "" {
			return nil, fmt.Errorf("wallet %s: unexpected raw file %s (%s)", vw, f.Path, f.Account)
		}
	}
	fixed := map[string]value{"vault_id": textValue(vault), "wallet_id": textValue(wallet)}
	bs := make([]*builder, len(walletTables))
	for i, t := range walletTables {
		bs[i] = newBuilder(t, nil)
		defer bs[i].release()
	}
	limits, matchers := bs[3], bs[4]
	produce := map[*Table]func(b *builder, f raw.File, body []byte) error{
		&Wallets:            func(b *builder, f raw.File, body []byte) error { return walletRecordRow(b, f, body, fixed) },
		&WalletBalances:     func(b *builder, f raw.File, body []byte) error { return walletBalanceRows(b, f, body, fixed) },
		&WalletTransactions: func(b *builder, f raw.File, body []byte) error { return walletTxRows(b, f, body, fixed) },
		&WalletLimits: func(b *builder, f raw.File, body []byte) error {
			return walletLimitRows(limits, matchers, f, body, fixed)
		},
	}
	kindOf := map[*Table]string{&Wallets: "wallet", &WalletBalances: "balances", &WalletTransactions: "transactions", &WalletLimits: "limits"}
	// Limits and their matchers are read in one pass: the matchers' batches
	// are kept, then staged once the limits are.
	var matcherRecs []arrow.RecordBatch
	defer func() {
		for _, r := range matcherRecs {
			r.Release()
		}
	}()
	matchers.flush = func(r arrow.RecordBatch) error { matcherRecs = append(matcherRecs, r); return nil }
	for i, t := range walletTables[:4] {
		fn, kind := produce[t], kindOf[t]
		err := stageRows(ctx, conn, "stage_"+t.Name, bs[i], func(b *builder) error {
			for _, f := range files {
				if walletFile(f) != kind {
					continue
				}
				body, err := os.ReadFile(l.path(f))
				if err != nil {
					return err
				}
				if err := fn(b, f, body); err != nil {
					return fmt.Errorf("%s: %w", f.Path, err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read wallet %s %s: %w", vw, kind, err)
		}
	}
	if err := matchers.finish(); err != nil {
		return nil, err
	}
	if err := stageRecords(ctx, conn, "stage_"+WalletLimitMatchers.Name, matchers.schema, matcherRecs); err != nil {
		return nil, fmt.Errorf("read wallet %s matchers: %w", vw, err)
	}
	stats := fileStats(files, bs[:4]...) // a limit's matchers are not rows of the file
	var bad []quarantined
	for _, b := range bs {
		bad = append(bad, b.bad...)
	}
	if err := stageRecord(ctx, conn, bad, stats); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	args := append(windowArgs(files[0]), sql.Named("vault", vault), sql.Named("wallet", wallet), sql.Named("account", vw),
		sql.Named("source", raw.SourceWallet), sql.Named("run_id", l.runID), sql.Named("report_id", nil))
	this := `vault_id = $vault AND wallet_id = $wallet`
	stmts := []string{
		`DELETE FROM wallets WHERE ` + this,
		`DELETE FROM wallet_balances WHERE ` + this + ` AND as_of IN (SELECT as_of FROM stage_wallet_balances)`,
		`DELETE FROM wallet_transactions WHERE ` + this + ` AND transaction_id IN (SELECT transaction_id FROM stage_wallet_transactions)`,
		`DELETE FROM wallet_limits WHERE ` + this,
		`DELETE FROM wallet_limit_matchers WHERE ` + this,
		`DELETE FROM quarantine WHERE source = $source AND account = $account AND window_from >= $from AND window_to <= $to`,
	}
	for _, t := range walletTables {
		stmts = append(stmts, insertSQL(t, "stage_"+t.Name))
	}
	if err := execAll(ctx, tx, args, append(stmts, recordFilesSQL...)...); err != nil {
		return nil, fmt.Errorf("load wallet %s: %w", vw, err)
	}
	return stats, tx.Commit()
}

// checkWalletID rejects a body (of the raw file file) whose wallet_id is not
// the wallet asked for; a body that is not JSON makes the file unreadable.
func checkWalletID(body []byte, file, wallet string) error {
	var doc struct {
		WalletID *string `json:"wallet_id"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return unreadable(file, fmt.Errorf("not a JSON object: %w", err))
	}
	if doc.WalletID != nil && *doc.WalletID != wallet {
		return fmt.Errorf("the answer is for wallet %q, not %q", *doc.WalletID, wallet)
	}
	return nil
}

// walletRecordRow adds the wallet record.
func walletRecordRow(b *builder, f raw.File, body []byte, fixed map[string]value) error {
	if err := checkWalletID(body, f.Path, fixed["wallet_id"].s); err != nil {
		return err
	}
	_, err := b.element(pos{file: f.Path, n: 1}, body, shape{}, fixed)
	return err
}

// walletBalanceRows adds one balances snapshot: a row per balance, or one
// row without a symbol when it holds none.
func walletBalanceRows(b *builder, f raw.File, body []byte, fixed map[string]value) error {
	if err := checkWalletID(body, f.Path, fixed["wallet_id"].s); err != nil {
		return err
	}
	var doc struct {
		AsOf     value             `json:"as_of"`
		Balances []json.RawMessage `json:"balances"`
	}
	if err := decodeJSON(body, &doc); err != nil {
		return unreadable(f.Path, fmt.Errorf("not a balances object: %s", jsonProblem(err)))
	}
	snap := map[string]value{"as_of": doc.AsOf}
	for k, v := range fixed {
		snap[k] = v
	}
	if len(doc.Balances) == 0 {
		_, err := b.add(pos{file: f.Path, n: 1}, body, func() error {
			for k, v := range snap {
				b.set(k, v)
			}
			return nil
		})
		return err
	}
	for i, raw := range doc.Balances {
		if _, err := b.element(pos{file: f.Path, n: int64(i + 1), path: pathAt("balances", i)}, raw, shape{}, snap); err != nil {
			return err
		}
	}
	return nil
}

// walletTxRows adds the transactions of one page; the initiator object
// gives initiator_type and initiator_id.
func walletTxRows(b *builder, f raw.File, body []byte, fixed map[string]value) error {
	var page struct {
		Content *[]json.RawMessage `json:"content"`
	}
	if err := decodeJSON(body, &page); err != nil || page.Content == nil {
		return unreadable(f.Path, errors.New("not a page envelope with content"))
	}
	for i, raw := range *page.Content {
		_, err := b.add(pos{file: f.Path, n: int64(i + 1), path: pathAt("content", i)}, raw, func() error {
			m, ok := object(raw)
			if !ok {
				return errors.New("not a JSON object")
			}
			if err := b.setFields(m, shape{skip: []string{"initiator"}}); err != nil {
				return err
			}
			if init := m.get("initiator"); init != nil && strings.TrimSpace(string(init)) != "null" {
				var who struct{ Type, ID value }
				if err := json.Unmarshal(init, &who); err != nil {
					return errors.New("initiator is not a {type, id} object")
				}
				b.set("initiator_type", who.Type)
				b.set("initiator_id", who.ID)
			}
			for k, v := range fixed {
				b.set(k, v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// walletLimitRows adds the limits, camelCase or snake_case, and their
// matchers; a limit without an id gets "#<its position>".
func walletLimitRows(limits, matchers *builder, f raw.File, body []byte, fixed map[string]value) error {
	var list []json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return unreadable(f.Path, errors.New("not a JSON array of limits"))
	}
	for i, raw := range list {
		at := pos{file: f.Path, n: int64(i + 1), path: pathAt("", i)}
		var ms []json.RawMessage
		id := value{}
		ok, err := limits.add(at, raw, func() error {
			m, ok := object(raw)
			if !ok {
				return errors.New("not a JSON object")
			}
			if err := limits.setFields(m, shape{renames: walletLimitRenames, skip: []string{"matchers"}}); err != nil {
				return err
			}
			if raw := m.get("matchers"); raw != nil && strings.TrimSpace(string(raw)) != "null" {
				if err := json.Unmarshal(raw, &ms); err != nil {
					return errors.New("matchers is not an array")
				}
			}
			for k, v := range fixed {
				limits.set(k, v)
			}
			id = limits.vals[limits.idx["limit_id"]]
			if !id.set || strings.TrimSpace(id.s) == "" {
				id = textValue("#" + strconv.Itoa(i+1))
				limits.set("limit_id", id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !ok { // rejected: its matchers are not loaded either
			continue
		}
		mfixed := map[string]value{"limit_id": id}
		for k, v := range fixed {
			mfixed[k] = v
		}
		for j, mraw := range ms {
			mat := pos{file: f.Path, n: int64(i + 1), path: pathAt("", i).at("matchers", j)}
			sh := shape{renames: map[string]string{"type": "matcher_type", "value": "matcher_value"}}
			if _, err := matchers.element(mat, mraw, sh, mfixed); err != nil {
				return err
			}
		}
	}
	return nil
}
