package sandbox

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Limit types the rules judge; others are kept and reported, never applied.
var knownLimitTypes = []string{"PER_TX", "PER_DAY"}

// generateWallets makes the wallets, their traffic of each generated day
// and, with breaks on, the injected wallet breaks and their near misses;
// then adds their truth, computed from the served data.
func (s *Sandbox) generateWallets() {
	usdc := func(v string) decimal.Decimal { return decimal.RequireFromString(v) }
	common := func() []walletLimit {
		return []walletLimit{
			{id: "lim-general-tx", typ: "PER_TX", qty: "50000", symbol: "USDC"},
			{id: "lim-user1-day", typ: "PER_DAY", qty: "100000", symbol: "USDC", matchers: [][2]string{{"USER", walletUser1}}, camel: true},
			{id: "lim-api-payout", typ: "PER_TX", qty: "1000", symbol: "USDC", matchers: [][2]string{
				{"API_CREDENTIAL", walletCred1}, {"COUNTERPARTY", counterparty2}, {"TRANSACTION_TYPE", "PAYOUT"}}},
		}
	}
	ws := []*sbWallet{
		{vault: "v-treasury", id: "w-ops", address: "0x4c1b2e7f9a0d3c5b6e8f1a2d4c6b8e0f2a4c6e81", kind: "EVM",
			frozen: []string{"AVALANCHE"}, chains: []string{"ETHEREUM", "ARBITRUM", "POLYGON", "BASE"},
			limits: append(common(),
				walletLimit{id: "lim-eth-arbitrum", typ: "PER_TX", qty: "5", symbol: "ETH", chain: "ARBITRUM", camel: true},
				walletLimit{id: "lim-week", typ: "PER_WEEK", qty: "1000000", symbol: "USDC"})},
		{vault: "v-treasury", id: "w-settle", address: "0x8e2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b92", kind: "EVM",
			chains: []string{"ETHEREUM", "BNB", "ARBITRUM"},
			limits: append(common(), walletLimit{id: "lim-sign-multisig", typ: "PER_DAY", qty: "250000", symbol: "USDC",
				matchers: [][2]string{{"SIGN_FOR", multisigOK}}, camel: true})},
		{vault: "v-custody", id: "w-reserve", address: "0x1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a03", kind: "EVM",
			chains: []string{"POLYGON", "BASE", "AVALANCHE"},
			limits: append(common(), walletLimit{id: "lim-two-initiators", typ: "PER_TX", qty: "10", symbol: "USDC",
				matchers: [][2]string{{"USER", walletUser2}, {"API_CREDENTIAL", walletCred1}}})},
		{vault: "v-custody", id: "w-xrp", address: "rN7n7otQDd6FczFgLdSqtcsAUxDkw6fzRH", kind: "XRP", chains: []string{"XRPL"},
			limits: []walletLimit{{id: "lim-xrp-tx", typ: "PER_TX", qty: "100000", symbol: "XRP"}}},
	}
	for _, w := range ws {
		w.opening = map[[2]string]decimal.Decimal{}
		for _, c := range w.chains {
			if w.kind == "EVM" {
				w.opening[[2]string{"USDC", c}] = usdc("2000000")
			}
			w.opening[[2]string{nativeOf[c], c}] = usdc("5000000")
			if w.kind == "EVM" {
				w.opening[[2]string{nativeOf[c], c}] = usdc("100")
			}
		}
	}
	for d := s.start; d < s.start+s.days; d++ {
		for wi, w := range ws {
			s.walletTraffic(s.rng(tagWallet, uint64(d), uint64(wi)), w, wi, d)
		}
	}
	var decoys []*walletTx
	if s.cfg.BreaksPerDay > 0 {
		decoys = s.injectWalletBreaks(ws)
	}
	for _, w := range ws {
		slices.SortFunc(w.txs, func(a, b *walletTx) int { return byTimeThenID(a.created, b.created, a.id, b.id) })
	}
	s.wallet.wallets = ws
	s.walletTruth(decoys)
}

// walletTraffic adds a wallet's ordinary transactions of day d: deposits,
// withdrawals of USDC and of the chain's native coin (fees in 18 decimals),
// a few FAILED or REJECTED, none on a frozen chain and none near a limit.
func (s *Sandbox) walletTraffic(r *rand.Rand, w *sbWallet, wi int, d int64) {
	day := dayTime(d)
	for i := range 8 {
		chain := w.chains[r.IntN(len(w.chains))]
		t := &walletTx{id: fmt.Sprintf("wtx-%d-%d-%02d", wi, d, i), status: "CONFIRMED", chain: chain,
			created: day.Add(time.Duration(r.Int64N(dayMS)) * time.Millisecond)}
		t.confirmed = t.created.Add(time.Duration(5+r.IntN(600)) * time.Second)
		symbol := "USDC"
		if w.kind != "EVM" {
			symbol = "XRP"
		}
		t.symbol = symbol
		switch {
		case i%4 == 0 || (i%4 == 3 && r.IntN(2) == 0):
			t.typ, t.src, t.dst = "DEPOSIT", externalAddr, w.address
			t.qty = decimal.New(r.Int64N(19_900_000_000)+100_000_000, -6)
		case i%4 == 2 && w.kind == "EVM":
			t.typ, t.src, t.dst, t.symbol = "TRANSFER", w.address, counterparty1, nativeOf[chain]
			t.initType, t.initID, t.txType = "USER", walletUser2, "TREASURY"
			t.qty = decimal.New(r.Int64N(500_000_000_000_000_000)+10_000_000_000_000_000, -18)
		default:
			t.typ, t.src = "TRANSFER", w.address
			t.qty = decimal.New(r.Int64N(3_990_000_000)+10_000_000, -6)
			switch r.IntN(3) {
			case 0:
				t.initType, t.initID = "USER", walletUser1
			case 1:
				t.initType, t.initID = "USER", walletUser2
			default:
				t.initType, t.initID = "API_CREDENTIAL", walletCred1
			}
			t.dst, t.txType = counterparty1, []string{"PAYOUT", "TREASURY"}[r.IntN(2)]
			if t.initID != walletCred1 && r.IntN(2) == 0 {
				t.dst = counterparty2
			}
			if w.id == "w-settle" && r.IntN(2) == 0 {
				t.signFor = multisigOK
			}
			if x := r.IntN(20); x == 0 {
				t.status, t.confirmed = "FAILED", time.Time{}
			} else if x == 1 {
				t.status, t.confirmed = "REJECTED", time.Time{}
			}
		}
		if t.outgoing() {
			t.feeSymbol = nativeOf[chain]
			t.fee = decimal.New(r.Int64N(90_000_000_000_000)+1_000_000_000_000, -18)
			if w.kind != "EVM" {
				t.fee = decimal.RequireFromString("0.000012")
			}
		}
		w.txs = append(w.txs, t)
	}
}

// injectWalletBreaks adds, on each generated day, one break of each wallet
// kind and its near misses; it returns the near misses (decoys).
func (s *Sandbox) injectWalletBreaks(ws []*sbWallet) []*walletTx {
	var decoys []*walletTx
	n := 0
	add := func(w *sbWallet, at time.Time, typ, symbol, chain, qty, initType, initID, dst, txType, signFor string) *walletTx {
		n++
		t := &walletTx{id: fmt.Sprintf("wtx-inj-%04d", n), typ: typ, status: "CONFIRMED", symbol: symbol, chain: chain,
			qty: decimal.RequireFromString(qty), initType: initType, initID: initID, txType: txType, signFor: signFor,
			created: at, confirmed: at.Add(30 * time.Second)}
		if typ == "DEPOSIT" {
			t.src, t.dst = externalAddr, w.address
		} else {
			t.src, t.dst = w.address, dst
			t.feeSymbol, t.fee = nativeOf[chain], decimal.RequireFromString("0.000021000000000007")
		}
		w.txs = append(w.txs, t)
		return t
	}
	evm := ws[:3]
	ops, settle, reserve, xrpw := ws[0], ws[1], ws[2], ws[3]
	for k := range int(s.days) {
		day := dayTime(s.start + int64(k))
		at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
		// PER_TX over the general limit; at the limit exactly; a scoped limit whose initiator does not match.
		w := evm[k%3]
		add(w, at(10, k), "TRANSFER", "USDC", w.chains[0], "50000.000001", "USER", walletUser2, counterparty1, "TREASURY", "")
		w = evm[(k+1)%3]
		decoys = append(decoys, add(w, at(10, 30), "TRANSFER", "USDC", w.chains[0], "50000", "USER", walletUser2, counterparty1, "TREASURY", ""))
		w = evm[(k+2)%3]
		decoys = append(decoys, add(w, at(11, 0), "TRANSFER", "USDC", w.chains[0], "5000", "USER", walletUser2, counterparty2, "PAYOUT", ""))
		// PER_DAY of user 1 on w-ops: crossed on even days, reached exactly on odd ones.
		if k%2 == 0 {
			for i, q := range []string{"45000", "45000", "15000"} {
				add(ops, at(13, 5*i), "TRANSFER", "USDC", "ETHEREUM", q, "USER", walletUser1, counterparty1, "TREASURY", "")
			}
		} else {
			sum := decimal.Zero
			for _, t := range ops.txs {
				if t.outgoing() && t.status == "CONFIRMED" && t.symbol == "USDC" && t.initID == walletUser1 && unixDay(t.created) == s.start+int64(k) {
					sum = sum.Add(t.qty)
				}
			}
			add(ops, at(13, 0), "TRANSFER", "USDC", "ETHEREUM", "50000", "USER", walletUser1, counterparty1, "TREASURY", "")
			decoys = append(decoys, add(ops, at(13, 5), "TRANSFER", "USDC", "ETHEREUM", decimal.NewFromInt(50000).Sub(sum).String(),
				"USER", walletUser1, counterparty1, "TREASURY", ""))
		}
		// Signing for a multisig wallet without a SIGN_FOR limit; and with one.
		signer := settle
		if k%2 == 1 {
			signer = reserve
		}
		add(signer, at(15, 0), "TRANSFER", "USDC", signer.chains[0], "100", "API_CREDENTIAL", walletCred1, counterparty1, "TREASURY", multisigNoLim)
		decoys = append(decoys, add(settle, at(15, 30), "TRANSFER", "USDC", "ETHEREUM", "200", "API_CREDENTIAL", walletCred1,
			counterparty1, "TREASURY", multisigOK))
		// A deposit confirmed on w-ops's frozen chain; a rejected transfer there.
		add(ops, at(16, 0), "DEPOSIT", "USDC", "AVALANCHE", "250", "", "", "", "", "")
		rej := add(ops, at(16, 30), "TRANSFER", "USDC", "AVALANCHE", "10", "USER", walletUser2, counterparty1, "TREASURY", "")
		rej.status, rej.confirmed, rej.fee = "REJECTED", time.Time{}, decimal.Zero
		decoys = append(decoys, rej)
		// PER_TX on one chain, over by one wei; at it exactly.
		switch k {
		case 3:
			add(ops, at(17, 0), "TRANSFER", "ETH", "ARBITRUM", "5.000000000000000001", "USER", walletUser2, counterparty1, "TREASURY", "")
		case 4:
			decoys = append(decoys, add(ops, at(17, 0), "TRANSFER", "ETH", "ARBITRUM", "5", "USER", walletUser2, counterparty1, "TREASURY", ""))
		}
		// Balances that move without a transaction (one wei, for one).
		switch k {
		case 0:
			ops.ghosts = append(ops.ghosts, ghost{"ETH", "ETHEREUM", decimal.New(1, -18), at(12, 0)})
		case 2:
			settle.ghosts = append(settle.ghosts, ghost{"USDC", "BNB", decimal.NewFromInt(250), at(12, 0)})
		case 4:
			reserve.ghosts = append(reserve.ghosts, ghost{"POL", "POLYGON", decimal.RequireFromString("-0.5"), at(12, 0)})
		case 5:
			xrpw.ghosts = append(xrpw.ghosts, ghost{"XRP", "XRPL", decimal.NewFromInt(1), at(12, 0)})
		}
	}
	// A deposit created in the last second of the generated days and
	// confirmed one millisecond after them: in no balance of the window.
	end := dayTime(s.start + s.days)
	late := add(reserve, end.Add(-time.Second), "DEPOSIT", "USDC", "BASE", "75", "", "", "", "", "")
	late.confirmed = end.Add(time.Millisecond)
	return append(decoys, late)
}

// limitApplies reports whether a limit of a known type applies to an
// outgoing transaction (DESIGN.md §9: symbol, chain, every matcher).
func limitApplies(l walletLimit, t *walletTx) bool {
	if !slices.Contains(knownLimitTypes, l.typ) || l.symbol != t.symbol || (l.chain != "" && l.chain != t.chain) {
		return false
	}
	for _, m := range l.matchers {
		var ok bool
		switch m[0] {
		case "USER", "API_CREDENTIAL":
			ok = t.initType == m[0] && t.initID == m[1]
		case "COUNTERPARTY":
			ok = strings.EqualFold(t.dst, m[1])
		case "TRANSACTION_TYPE":
			ok = t.txType == m[1]
		case "SIGN_FOR":
			ok = strings.EqualFold(t.signFor, m[1])
		}
		if !ok {
			return false
		}
	}
	return true
}

// walletTruth adds the wallet breaks a run over the generated days at the
// anchor must report, judged on the data as served then, and the decoys.
func (s *Sandbox) walletTruth(decoys []*walletTx) {
	from, to := dayTime(s.start), dayTime(s.start+s.days)
	inWindow := func(t time.Time) bool { return !t.IsZero() && !t.Before(from) && t.Before(to) && t.Before(s.anchor) }
	var out []TruthBreak
	for _, w := range s.wallet.wallets {
		signFor := map[string]bool{}
		for _, l := range w.limits {
			for _, m := range l.matchers {
				if m[0] == "SIGN_FOR" {
					signFor[strings.ToLower(m[1])] = true
				}
			}
		}
		dayTotal := map[string]decimal.Decimal{}
		for _, t := range w.txs { // sorted by created, id
			b := TruthBreak{PaymentID: t.id, Account: w.key()}
			if !inWindow(t.created) {
				continue
			}
			if t.signFor != "" && !signFor[strings.ToLower(t.signFor)] {
				b.RuleID = "wallet_sign_for_limit_missing"
				out = append(out, b)
			}
			if inWindow(t.confirmed) && slices.Contains(w.frozen, t.chain) {
				b.RuleID = "wallet_activity_while_frozen"
				out = append(out, b)
			}
			if !t.outgoing() || t.status != "CONFIRMED" {
				continue
			}
			for _, l := range w.limits {
				if !limitApplies(l, t) {
					continue
				}
				limit := decimal.RequireFromString(l.qty)
				over := t.qty.GreaterThan(limit)
				if l.typ == "PER_DAY" {
					k := l.id + t.created.UTC().Format("2006-01-02")
					before := dayTotal[k]
					dayTotal[k] = before.Add(t.qty)
					over = dayTotal[k].GreaterThan(limit) && !before.GreaterThan(limit)
				}
				if over {
					b.RuleID = "wallet_limit_breach"
					out = append(out, b)
				}
			}
		}
		seen := map[[3]string]bool{} // wallet_balance_drift judges each UTC day
		for _, g := range w.ghosts {
			if k := [3]string{g.symbol, g.chain, g.at.UTC().Format("2006-01-02")}; inWindow(g.at) && !seen[k] {
				seen[k] = true
				out = append(out, TruthBreak{RuleID: "wallet_balance_drift", Account: w.key()})
			}
		}
	}
	s.truth.Breaks = append(s.truth.Breaks, out...)
	for _, t := range decoys {
		for _, w := range s.wallet.wallets {
			if slices.Contains(w.txs, t) {
				rule := "wallet_limit_breach"
				switch {
				case t.signFor != "":
					rule = "wallet_sign_for_limit_missing"
				case t.typ == "DEPOSIT":
					rule = "wallet_balance_drift"
				case t.status == "REJECTED":
					rule = "wallet_activity_while_frozen"
				}
				s.truth.Decoys = append(s.truth.Decoys, TruthBreak{RuleID: rule, PaymentID: t.id, Account: w.key()})
			}
		}
	}
	for _, l := range []*[]TruthBreak{&s.truth.Breaks, &s.truth.Decoys} {
		slices.SortFunc(*l, func(a, b TruthBreak) int {
			return cmp.Or(cmp.Compare(a.RuleID, b.RuleID), cmp.Compare(a.PaymentID, b.PaymentID), cmp.Compare(a.Account, b.Account))
		})
	}
}
