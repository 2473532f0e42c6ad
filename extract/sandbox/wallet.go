package sandbox

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract"
)

// The wallet service (spec wallet.md, read paths of DESIGN.md §9), served
// under WalletPrefix: a few vaults and wallets (three EVM, one XRP), their
// transactions of each generated day, their limits (general and scoped,
// every matcher kind, one of an unknown type, one invalid) and balances per
// chain at any instant, computed from the transactions. Breaks:
// wallet_breaks.go.

// WalletPrefix is the path of the wallet service on the sandbox's listener:
// RECON_WALLET_URL = URL + WalletPrefix.
const WalletPrefix = "/wallet"

// Chains and the symbol their network fees are paid in.
var nativeOf = map[string]string{"ETHEREUM": "ETH", "ARBITRUM": "ETH", "BASE": "ETH", "POLYGON": "POL",
	"BNB": "BNB", "AVALANCHE": "AVAX", "ONEMONEY": "USD1", "XRPL": "XRP"}

// usdPrice values balances (fiat_value).
var usdPrice = map[string]decimal.Decimal{"USDC": decimal.NewFromInt(1), "ETH": decimal.NewFromInt(2500),
	"POL": decimal.RequireFromString("0.5"), "BNB": decimal.NewFromInt(600), "AVAX": decimal.NewFromInt(30),
	"XRP": decimal.RequireFromString("0.52"), "USD1": decimal.NewFromInt(1)}

// Initiators and counterparties of the generated transactions.
const (
	walletUser1   = "3f0c2d9e-6b1a-4c55-9a0e-0d6f1c2b7a11"
	walletUser2   = "8a4e7b21-2c3d-4f6e-8b9a-1c2d3e4f5a22"
	walletCred1   = "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e33"
	counterparty1 = "0x7a16ff8270133f063aab6c9977183d9e72835428"
	counterparty2 = "0x5e0b1c6a9d3f4e2b8c7a6d5e4f3a2b1c0d9e8f77"
	multisigOK    = "0x9b1f0a2c3d4e5f60718293a4b5c6d7e8f9a0b1c2" // w-settle has a SIGN_FOR limit for it
	multisigNoLim = "0x2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e" // no wallet has one
	externalAddr  = "0x0fe1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7"
)

// sbWallet is one generated wallet.
type sbWallet struct {
	vault, id, address, kind string
	frozen                   []string
	chains                   []string                      // chains its traffic uses
	opening                  map[[2]string]decimal.Decimal // (symbol, chain) before the first generated day
	limits                   []walletLimit
	txs                      []*walletTx // sorted by created, id
	ghosts                   []ghost     // unexplained balance changes (wallet_balance_drift)
}

func (w *sbWallet) key() string { return w.vault + "/" + w.id }

// walletTx is one generated transaction.
type walletTx struct {
	id, typ, status, symbol, chain, src, dst string
	initType, initID, txType, signFor        string
	qty, fee                                 decimal.Decimal
	feeSymbol                                string
	created, confirmed                       time.Time // confirmed zero: never (FAILED, REJECTED)
}

func (t *walletTx) outgoing() bool { return t.typ == "TRANSFER" || t.typ == "RAW" }

// walletLimit is one limit; camel serves it with camelCase names.
type walletLimit struct {
	id, typ, qty, symbol, chain string
	matchers                    [][2]string
	camel                       bool
}

// ghost is a balance change no transaction explains, from at on.
type ghost struct {
	symbol, chain string
	delta         decimal.Decimal
	at            time.Time
}

// walletState is the wallet service's: the generated wallets (read-only
// after New) and a count of the requests refused for a blockchain on a
// non-EVM wallet.
type walletState struct {
	wallets []*sbWallet
	mu      sync.Mutex
	nonEVM  int
}

// Wallets lists the wallets as vault_id/wallet_id, the value of RECON_WALLETS.
func (s *Sandbox) Wallets() []string {
	out := make([]string, len(s.wallet.wallets))
	for i, w := range s.wallet.wallets {
		out[i] = w.key()
	}
	return out
}

// NonEVMRefusals counts the balances requests refused because they gave a
// blockchain for a non-EVM wallet.
func (s *Sandbox) NonEVMRefusals() int {
	s.wallet.mu.Lock()
	defer s.wallet.mu.Unlock()
	return s.wallet.nonEVM
}

func (s *Sandbox) walletRoutes() {
	base := "GET " + WalletPrefix + extract.PathWalletVaults + "{vault}" + extract.PathWallets + "{wallet}"
	s.handle(s.mux, base, s.walletAuthed(s.getWallet))
	s.handle(s.mux, base+extract.PathWalletBalances, s.walletAuthed(s.getWalletBalances))
	s.handle(s.mux, base+extract.PathWalletTxs, s.walletAuthed(s.listWalletTxs))
	s.handle(s.mux, base+extract.PathWalletLimits, s.walletAuthed(s.getWalletLimits))
}

// walletError writes the wallet service's error body (not shown in the
// spec; chosen: type, title, status, detail, errorCode).
func walletError(w http.ResponseWriter, status int, code, title, detail string) {
	writeJSON(w, status, map[string]any{"type": "urn:recon-sandbox:wallet:" + strings.ToLower(code), "title": title,
		"status": status, "detail": detail, "errorCode": code})
}

// walletAuthed admits a bearer token like every service; with
// Config.WalletAudience only a token issued for that audience.
func (s *Sandbox) walletAuthed(h http.HandlerFunc) http.HandlerFunc {
	deny := func(w http.ResponseWriter, detail string) {
		walletError(w, http.StatusUnauthorized, "UNAUTHORIZED", "Unauthorized", detail)
	}
	return s.authed(deny, func(w http.ResponseWriter, r *http.Request) {
		if aud := s.cfg.WalletAudience; aud != "" && s.tokenAudience(r) != aud {
			walletError(w, http.StatusForbidden, "FORBIDDEN", "Forbidden", "the token's audience is not the wallet service's")
			return
		}
		h(w, r)
	})
}

// findWallet returns the wallet of the request's path, or answers 404.
func (s *Sandbox) findWallet(w http.ResponseWriter, r *http.Request) *sbWallet {
	v, id := r.PathValue("vault"), r.PathValue("wallet")
	for _, x := range s.wallet.wallets {
		if x.vault == v && x.id == id {
			return x
		}
	}
	walletError(w, http.StatusNotFound, "WALLET_NOT_FOUND", "Not Found", fmt.Sprintf("no wallet %s in vault %s", id, v))
	return nil
}

func (s *Sandbox) getWallet(w http.ResponseWriter, r *http.Request) {
	x := s.findWallet(w, r)
	if x == nil {
		return
	}
	frozen := append([]string{}, x.frozen...) // [] rather than null
	writeJSON(w, http.StatusOK, map[string]any{"wallet_id": x.id, "vault_id": x.vault, "address": x.address,
		"kind": x.kind, "frozen_chains": frozen})
}

// balancesAt sums the wallet's opening balances, the transactions confirmed
// before at and the ghosts before at, per (symbol, chain).
func (x *sbWallet) balancesAt(at time.Time) map[[2]string]decimal.Decimal {
	m := map[[2]string]decimal.Decimal{}
	for k, v := range x.opening {
		m[k] = v
	}
	for _, t := range x.txs {
		if t.confirmed.IsZero() || !t.confirmed.Before(at) {
			continue
		}
		k := [2]string{t.symbol, t.chain}
		if t.outgoing() {
			m[k] = m[k].Sub(t.qty)
			if t.fee.IsPositive() {
				f := [2]string{t.feeSymbol, t.chain}
				m[f] = m[f].Sub(t.fee)
			}
		} else {
			m[k] = m[k].Add(t.qty)
		}
	}
	for _, g := range x.ghosts {
		if g.at.Before(at) {
			k := [2]string{g.symbol, g.chain}
			m[k] = m[k].Add(g.delta)
		}
	}
	return m
}

// getWalletBalances serves balances at as_of (default now; later than now
// is now): one entry per (symbol, chain) held, sorted. ?blockchain= keeps
// one chain, and is refused for a non-EVM wallet (spec).
func (s *Sandbox) getWalletBalances(w http.ResponseWriter, r *http.Request) {
	x := s.findWallet(w, r)
	if x == nil {
		return
	}
	q := r.URL.Query()
	now := s.now()
	at := now
	if v := q.Get("as_of"); v != "" {
		t, err := time.Parse(extract.TimeFormat, v)
		if err != nil {
			walletError(w, http.StatusBadRequest, "INVALID_REQUEST", "Bad Request", "as_of must be a 24-character UTC timestamp")
			return
		}
		at = t
	}
	chain := q.Get("blockchain")
	switch {
	case chain != "" && x.kind != "EVM":
		s.wallet.mu.Lock()
		s.wallet.nonEVM++
		s.wallet.mu.Unlock()
		walletError(w, http.StatusBadRequest, "BLOCKCHAIN_NOT_SUPPORTED", "Bad Request",
			fmt.Sprintf("wallet %s is a %s wallet: blockchain applies to EVM wallets only", x.id, x.kind))
		return
	case chain != "" && (nativeOf[chain] == "" || chain == "XRPL"):
		walletError(w, http.StatusBadRequest, "INVALID_REQUEST", "Bad Request", "unknown blockchain "+chain)
		return
	}
	m := x.balancesAt(minTime(at, now))
	keys := slices.SortedFunc(func(yield func([2]string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	type balance struct {
		Symbol       string `json:"symbol"`
		Blockchain   string `json:"blockchain"`
		Quantity     string `json:"quantity"`
		FiatValue    string `json:"fiat_value"`
		FiatCurrency string `json:"fiat_currency"`
		OriginChain  string `json:"origin_chain"`
	}
	out := []balance{}
	for _, k := range keys {
		if chain != "" && k[1] != chain {
			continue
		}
		origin := k[1]
		if k[0] == "ETH" {
			origin = "ETHEREUM"
		}
		out = append(out, balance{Symbol: k[0], Blockchain: k[1], Quantity: m[k].String(),
			FiatValue: fiat(m[k].Mul(usdPrice[k[0]])), FiatCurrency: "USD", OriginChain: origin})
	}
	writeJSON(w, http.StatusOK, map[string]any{"wallet_id": x.id, "as_of": ts(at), "balances": out})
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// txJSON renders a transaction as the service shows it at now: created
// after now it does not exist; confirmed after now it is PENDING.
func (t *walletTx) json(now time.Time) json.RawMessage {
	status, confirmed := t.status, t.confirmed
	if !confirmed.IsZero() && !confirmed.Before(now) {
		status, confirmed = "PENDING", time.Time{}
	}
	var initiator any
	if t.initType != "" {
		initiator = map[string]string{"type": t.initType, "id": t.initID}
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	fee, feeSymbol := any(nil), any(nil)
	if t.outgoing() && !t.fee.IsZero() {
		fee, feeSymbol = t.fee.String(), t.feeSymbol
	}
	return mustJSON(map[string]any{
		"transaction_id": t.id, "type": t.typ, "status": status, "symbol": t.symbol, "quantity": t.qty.String(),
		"blockchain": t.chain, "source_address": t.src, "destination_address": t.dst, "initiator": initiator,
		"transaction_type": str(t.txType), "sign_for": str(t.signFor), "tx_hash": "0x" + fmt.Sprintf("%064x", hash(t.id)),
		"network_fee": fee, "network_fee_symbol": feeSymbol,
		"created_at": ts(t.created), "confirmed_at": str(ts(confirmed)),
	})
}

// listWalletTxs serves the transactions created in [start_date, end_date)
// (both required) and before now, by created_at then id, in the page envelope.
func (s *Sandbox) listWalletTxs(w http.ResponseWriter, r *http.Request) {
	x := s.findWallet(w, r)
	if x == nil {
		return
	}
	q := r.URL.Query()
	page, size, bad := pageParams(q, 20, extract.MaxWalletPage)
	from, err1 := time.Parse(extract.TimeFormat, q.Get("start_date"))
	to, err2 := time.Parse(extract.TimeFormat, q.Get("end_date"))
	switch {
	case bad != "":
	case err1 != nil || err2 != nil:
		bad = "start_date and end_date are required 24-character UTC timestamps"
	case to.Before(from):
		bad = "end_date is before start_date"
	}
	if bad != "" {
		walletError(w, http.StatusBadRequest, "INVALID_REQUEST", "Bad Request", bad)
		return
	}
	now := s.now()
	var sel []*walletTx
	for _, t := range x.txs {
		if !t.created.Before(from) && t.created.Before(to) && t.created.Before(now) {
			sel = append(sel, t)
		}
	}
	writePage(w, "content", len(sel), page, size, []sortJSON{ascending("created_at")},
		func(i int) json.RawMessage { return sel[i].json(now) })
}

// getWalletLimits serves the limits, some in camelCase, some in snake_case.
func (s *Sandbox) getWalletLimits(w http.ResponseWriter, r *http.Request) {
	x := s.findWallet(w, r)
	if x == nil {
		return
	}
	out := make([]map[string]any, 0, len(x.limits))
	for _, l := range x.limits {
		ms := make([]map[string]string, len(l.matchers))
		for i, m := range l.matchers {
			ms[i] = map[string]string{"type": m[0], "value": m[1]}
		}
		o := map[string]any{"symbol": l.symbol, "matchers": ms}
		if l.chain != "" {
			o["blockchain"] = l.chain
		}
		if l.camel {
			o["limitId"], o["limitType"], o["limitQty"] = l.id, l.typ, l.qty
		} else {
			o["limit_id"], o["limit_type"], o["limit_qty"] = l.id, l.typ, l.qty
		}
		out = append(out, o)
	}
	writeJSON(w, http.StatusOK, out)
}
