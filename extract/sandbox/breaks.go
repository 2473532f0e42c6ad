package sandbox

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract/raw"
)

// Rows an injected break leaves out of the served data.
const (
	omitOps       uint8 = 1 << iota // the PAYMENT_OPS row
	omitRecon                       // every RECON row
	omitStatement                   // the statement entry on our account
	omitFailure                     // the FAILURE_CONVERSION_SSA row
)

// edits are the changes an injected break makes to the rows of one payment.
type edits struct {
	recon       func([]row)        // the payment's RECON rows
	entry       func(*entry)       // its statement entry on our account
	failure     func(row)          // its FAILURE_CONVERSION_SSA row
	liquidation func(*liquidation) // its liquidation (set omit to remove it)
	api         func(*apiPayment)  // its server API record
}

// grace is the default grace period of the rules that have one: the truth
// puts an item whose grace has not run out at the anchor under Pending.
const grace = 24 * time.Hour

// quoteLag is statement_entry_without_payment's default quote_lag: entries
// within it of the first generated day are not judged (no report covers the
// day before), so no break is injected there.
const quoteLag = time.Hour

// injector injects one rule kind of break into a payment. Each injected
// payment must be found by its rule, and by no other rule, as the truth says;
// a decoy is a near miss that no rule may report.
type injector struct {
	rule     string
	decoy    bool
	pair     bool // the break reuses an earlier payment of the same sender node (the partner)
	eligible func(*Sandbox, *payment) bool
	apply    func(*Sandbox, *payment, *injection)
	account  func(*payment) string              // the account the rule reports; nil: none
	due      func(*Sandbox, *payment) time.Time // when the grace period starts (zero: long ago); nil: the rule has none
}

// injection is one injector applied to one payment.
type injection struct {
	inj     *injector
	variant int       // the injector's count of injections before this one
	partner int       // duplicate_end_to_end_id: index of the earlier payment whose id is reused
	quote   time.Time // when set, the payment is re-timed to this quote time (grace edges)
}

// apply changes p as the injection says.
func (in *injection) apply(s *Sandbox, p *payment) {
	if in.inj.apply != nil {
		in.inj.apply(s, p, in)
	}
	if !in.quote.IsZero() {
		retime(p, in.quote)
	}
}

// partnerOf marks a payment whose end_to_end_id another payment reuses: it stays as generated.
var partnerOf = &injector{}

// injectors lists every rule kind the sandbox injects; add a row to add a kind.
var injectors = []injector{
	{rule: "ops_missing_in_recon", eligible: hasMoved, apply: omit(omitRecon)},
	{rule: "recon_missing_in_ops", eligible: always, apply: omit(omitOps)},
	{rule: "ops_recon_amount_mismatch", eligible: unliquidated, apply: reconMismatch},
	{rule: "payment_missing_in_statement", eligible: hasMoved, apply: omit(omitStatement), account: ourAccount, due: executed},
	{rule: "statement_entry_without_payment", eligible: judgedEntry, apply: omit(omitOps | omitRecon), account: ourAccount, due: executed},
	{rule: "statement_amount_mismatch", eligible: hasMoved, apply: entryAmount, account: ourAccount},
	{rule: "statement_balance_chain_break", eligible: judgedEntry, apply: chainJump, account: ourAccount},
	{rule: "failed_payment_unrecovered", eligible: failable, apply: unrecovered, account: (*payment).ssaAccount, due: failedAt},
	{rule: "duplicate_end_to_end_id", pair: true, eligible: always, apply: reuseEndToEndID, account: senderAccount},
	{rule: "fx_rate_outlier", eligible: quotedByUs, apply: fxOff(false), account: ourAccount},
	{rule: "fx_rate_outlier", decoy: true, eligible: quotedByUs, apply: fxOff(true)},
	// Liquidation and server API kinds: breaks_services.go.
	{rule: "liquidation_missing", eligible: receivedCompleted, apply: dropLiquidation, account: ourAccount, due: executed},
	{rule: "liquidation_amount_mismatch", eligible: liquidated, apply: liquidationAmount(false), account: ourAccount},
	{rule: "liquidation_amount_mismatch", decoy: true, eligible: liquidated, apply: liquidationAmount(true)},
	{rule: "liquidation_not_delivered", eligible: liquidatedOnDay, apply: undelivered(false), account: ourAccount},
	{rule: "liquidation_not_delivered", decoy: true, eligible: liquidatedOnDay, apply: undelivered(true)},
	{rule: "liquidation_stuck", eligible: liquidatedOnDay, apply: stuck, account: ourAccount, due: liquidationCreated},
	{rule: "liquidation_trades_mismatch", eligible: liquidatedOnDay, apply: tradesOff(false), account: ourAccount},
	{rule: "liquidation_trades_mismatch", decoy: true, eligible: liquidatedOnDay, apply: tradesOff(true)},
	{rule: "payment_state_mismatch", eligible: odlMoved, apply: stateMismatch(false), account: ourAccount},
	{rule: "payment_state_mismatch", decoy: true, eligible: odlMoved, apply: stateMismatch(true)},
	{rule: "payment_stale", eligible: createdOnDay, apply: stale, account: ourAccount, due: staleSince},
	{rule: "payment_stale", decoy: true, eligible: odlMoved, apply: deliveredAfterAmend},
	// fee_mismatch: fees.go.
	{rule: "fee_mismatch", eligible: feeJudged, apply: feeOff, account: ourAccount},
	{rule: "fee_mismatch", decoy: true, eligible: slabBoundary, apply: onSlabBoundary},
	// Returns and failed payments whose funds moved: breaks_returns.go.
	{rule: "return_unreconciled", eligible: returnable, apply: returned(returnBroken), account: ourAccount, due: returnDue},
	{rule: "return_unreconciled", decoy: true, eligible: returnable, apply: returned(returnOrdinary)},
	{rule: "return_unreconciled", decoy: true, eligible: returnableNextDay, apply: returned(returnNextDay)},
	{rule: "failed_payment_unrecovered", eligible: failableOut, apply: movedUnrecovered(false), account: ourAccount, due: failedAt},
	{rule: "failed_payment_unrecovered", decoy: true, eligible: failableOut, apply: movedUnrecovered(true)},
}

func always(*Sandbox, *payment) bool { return true }

// moved reports whether the payment moved money (COMPLETED or EXECUTED).
func moved(p *payment) bool { return p.state == stateCompleted || p.state == stateExecuted }

func hasMoved(_ *Sandbox, p *payment) bool { return moved(p) }

// judgedEntry: the payment's statement entry is created on a generated day,
// past the quote lag of the first one, so a run over the generated days judges it.
func judgedEntry(s *Sandbox, p *payment) bool {
	return moved(p) && unixDay(p.executed) < s.start+s.days && !p.executed.Before(dayTime(s.start).Add(quoteLag))
}

// failable: an on-demand liquidity payment (only those fail) that ends on a generated day.
func failable(s *Sandbox, p *payment) bool {
	end := p.executed
	if p.state == stateFailed {
		end = p.failed
	}
	return p.odl && unixDay(end) < s.start+s.days
}

// quotedByUs: we send it across currencies, so the reports carry fx_spot_rate.
func quotedByUs(_ *Sandbox, p *payment) bool { return p.out && p.odl && moved(p) }

func ourAccount(p *payment) string              { return p.ours.addr() }
func senderAccount(p *payment) string           { return p.sender.addr() }
func executed(_ *Sandbox, p *payment) time.Time { return p.executed }
func failedAt(_ *Sandbox, p *payment) time.Time { return p.failed }

// ssaAccount is the sender's settlement account at the destination exchange.
func (p *payment) ssaAccount() string {
	return strings.ToLower(p.sender.code+"_ssa_"+p.receiver.currency) + "@" + currencies[p.receiver.currency].exchange
}

func omit(rows uint8) func(*Sandbox, *payment, *injection) {
	return func(_ *Sandbox, p *payment, _ *injection) { p.omit |= rows }
}

// reconMismatch makes RECON disagree with PAYMENT_OPS, in turn: the sent
// amount by one cent on every row, the received amount on the last row only,
// the received currency on every row.
func reconMismatch(_ *Sandbox, p *payment, in *injection) {
	cent, other := decimal.New(1, -2), "XAF"
	p.edit = &edits{recon: func(rows []row) {
		switch in.variant % 3 {
		case 0:
			for _, r := range rows {
				r.put("sent_amount", fiat(p.sent.Add(cent)))
			}
		case 1:
			rows[len(rows)-1].put("received_amount", fiat(p.received.Sub(decimal.New(1, 0))))
		default:
			for _, r := range rows {
				r.put("received_currency", other)
			}
		}
	}}
}

// entryAmount books the statement entry one cent short, or ten units over.
func entryAmount(_ *Sandbox, p *payment, in *injection) {
	delta := decimal.New(-10, 0)
	if in.variant%2 == 0 {
		delta = decimal.New(1, -2)
	}
	p.edit = &edits{entry: func(e *entry) { e.change = e.change.Add(delta) }}
}

// chainJump moves the balance at the payment's entry without a change: this
// entry's balance_result breaks the chain, later ones follow from it.
func chainJump(_ *Sandbox, p *payment, in *injection) {
	jump := decimal.New(5000, -2)
	if in.variant%2 == 1 {
		jump = decimal.New(-777, -2)
	}
	p.edit = &edits{entry: func(e *entry) { e.jump = jump }}
}

// fail makes a payment that moved money FAILED at the time it executed.
func fail(p *payment) {
	if p.state != stateFailed {
		p.state, p.failed, p.executed = stateFailed, p.executed, time.Time{}
	}
}

// unrecovered fails the payment and leaves its recovery transfer PENDING or FAILED.
func unrecovered(_ *Sandbox, p *payment, in *injection) {
	fail(p)
	state := "PENDING"
	if in.variant%2 == 1 {
		state = stateFailed
	}
	p.edit = &edits{failure: func(r row) { r.put("ssa_transfer_state", state) }}
}

// reuseEndToEndID gives the payment the end_to_end_id of an earlier payment of the same sender node.
func reuseEndToEndID(s *Sandbox, p *payment, in *injection) {
	p.e2e = s.payment(p.day, in.partner).e2e
}

// fxOff moves received_amount away from sent_amount × fx_spot_rate. Amount
// and rate are first rounded (sent to hundreds, the rate to two decimals) so
// that the deviation is exact: a decoy sits exactly 200 bps off (the default
// threshold: not a break), a break one cent past it or 300 bps off.
func fxOff(decoy bool) func(*Sandbox, *payment, *injection) {
	return func(_ *Sandbox, p *payment, in *injection) {
		sent := decimal.Max(p.sent.Div(decimal.New(100, 0)).Round(0).Mul(decimal.New(100, 0)), decimal.New(100, 0))
		p.setSent(sent)
		p.spot = p.spot.Round(2)
		atSpot := sent.Mul(p.spot)
		below, above := decimal.RequireFromString("0.98"), decimal.RequireFromString("1.02")
		switch {
		case decoy && in.variant%2 == 0:
			p.received = atSpot.Mul(below)
		case decoy:
			p.received = atSpot.Mul(above)
		case in.variant%2 == 0:
			p.received = atSpot.Mul(below).Sub(decimal.New(1, -2))
		default:
			p.received = atSpot.Mul(decimal.RequireFromString("1.03"))
		}
	}
}

// setSent changes the sent amount and what follows from it on the way to the receiver.
func (p *payment) setSent(sent decimal.Decimal) {
	adj := sent.Sub(sent.Mul(tradeFee).Round(2))
	p.xrp = p.xrp.Mul(adj).DivRound(p.srcAdj, 6)
	p.sent, p.srcAdj = sent, adj
	p.withdrawal = p.xrp.Add(p.incentive)
	p.deposit = p.withdrawal.Sub(xrpNetFee)
}

// retime moves the payment's quote to q (inside its own slot), creation a
// second later and settlement (or failure), if it has one, two minutes after the quote.
func retime(p *payment, q time.Time) {
	p.quote, p.created = q, q.Add(time.Second)
	for _, t := range []*time.Time{&p.executed, &p.failed} {
		if !t.IsZero() {
			*t = q.Add(2 * time.Minute)
		}
	}
}

// injectBreaks places the grace edges, then picks, for every generated day
// and injector, BreaksPerDay more distinct eligible payments, then records the truth.
func (s *Sandbox) injectBreaks() {
	s.breaks = map[uint64]*injection{}
	count := map[*injector]int{}
	if s.cfg.BreaksPerDay > 0 {
		s.graceEdges(count)
	}
	for d := s.start; d < s.start+s.days; d++ {
		r := s.rng(tagBreaks, uint64(d), 0)
		for k := range injectors {
			inj := &injectors[k]
			for range s.cfg.BreaksPerDay {
				for range 64 { // bounded: tiny days may have no eligible payment left
					i := r.IntN(s.n)
					if s.breaks[dayKey(d, i)] != nil {
						continue
					}
					p := s.payment(d, i)
					if !inj.eligible(s, p) {
						continue
					}
					in := &injection{inj: inj, variant: count[inj]}
					if inj.pair {
						if in.partner = s.partner(r, p); in.partner < 0 {
							continue
						}
						s.breaks[dayKey(d, in.partner)] = &injection{inj: partnerOf}
					}
					s.breaks[dayKey(d, i)] = in
					count[inj]++
					break
				}
			}
		}
	}
	s.returns = s.returnKeys()
	s.placeHistory()
	s.recordTruth()
}

// partner returns the index of an earlier, untouched payment of the same day
// sent from p's sender node, or -1.
func (s *Sandbox) partner(r *rand.Rand, p *payment) int {
	if p.idx == 0 {
		return -1
	}
	for range 64 {
		j := r.IntN(p.idx)
		if s.breaks[dayKey(p.day, j)] == nil && s.payment(p.day, j).sender.node == p.sender.node {
			return j
		}
	}
	return -1
}

// graceEdges places, for each rule with a grace period, one item due ten
// minutes before the anchor (a break) and one due ten minutes after it
// (pending), when those times fall on generated days.
func (s *Sandbox) graceEdges(count map[*injector]int) {
	for k := range injectors {
		inj := &injectors[k]
		if inj.due == nil {
			continue
		}
		// Settlement comes two minutes after the quote (retime).
		for _, e := range []struct {
			quote time.Time
			step  int
		}{
			{s.anchor.Add(-grace - 12*time.Minute), -1},
			{s.anchor.Add(-grace + 8*time.Minute), +1},
		} {
			if in := s.near(inj, e.quote, e.step); in != nil {
				in.variant = count[inj]
				count[inj]++
			}
		}
	}
}

// near injects inj into the eligible payment whose slot holds q, or the
// nearest one stepping away from it (earlier for -1, later for +1), re-timed
// as close to q as its slot allows.
func (s *Sandbox) near(inj *injector, q time.Time, step int) *injection {
	day := unixDay(q)
	n := int64(s.n)
	off := q.UnixMilli() - day*dayMS
	for i := off * n / dayMS; i >= 0 && i < n && day >= s.start && day < s.start+s.days; i += int64(step) {
		if s.breaks[dayKey(day, int(i))] != nil {
			continue
		}
		lo, hi := i*dayMS/n, (i+1)*dayMS/n-1
		at := dayTime(day).Add(time.Duration(min(max(off, lo), hi)) * time.Millisecond)
		c := *s.payment(day, int(i))
		retime(&c, at)
		if inj.eligible(s, &c) {
			in := &injection{inj: inj, quote: at}
			s.breaks[dayKey(day, int(i))] = in
			return in
		}
	}
	return nil
}

// recordTruth lists every injected break, pending item and decoy as the
// rules report them on the served data.
func (s *Sandbox) recordTruth() {
	s.truth = Truth{AsOf: s.anchor}
	for key, in := range s.breaks {
		inj := in.inj
		if inj.rule == "" {
			continue
		}
		p := s.payment(int64(key>>32), int(uint32(key)))
		b := TruthBreak{RuleID: inj.rule, PaymentID: p.id}
		if inj.account != nil {
			b.Account = inj.account(p)
		}
		switch {
		case inj.decoy:
			s.truth.Decoys = append(s.truth.Decoys, b)
		case inj.due != nil && inj.due(s, p).Add(grace).After(s.anchor):
			s.truth.Pending = append(s.truth.Pending, b)
		default:
			s.truth.Breaks = append(s.truth.Breaks, b)
		}
	}
	s.truth.Breaks = append(s.truth.Breaks, s.malformedTruth()...)
	for _, add := range []func() (breaks, pending, decoys []TruthBreak){s.transferTruth, s.balanceTruth, s.returnTruth} { // kinds not tied to a payment
		b, p, d := add()
		s.truth.Breaks, s.truth.Pending, s.truth.Decoys = append(s.truth.Breaks, b...), append(s.truth.Pending, p...), append(s.truth.Decoys, d...)
	}
	for _, l := range []*[]TruthBreak{&s.truth.Breaks, &s.truth.Pending, &s.truth.Decoys} {
		slices.SortFunc(*l, func(a, b TruthBreak) int {
			return cmp.Or(cmp.Compare(a.RuleID, b.RuleID), cmp.Compare(a.PaymentID, b.PaymentID), cmp.Compare(a.Account, b.Account))
		})
	}
}

// malformedTruth lists a row_quarantined break for every malformed copy the
// report rows of the generated days get (Faults.MalformedRows): a run over
// those days quarantines each one, and the break names the row's payment.
func (s *Sandbox) malformedTruth() []TruthBreak {
	if s.cfg.Faults.MalformedRows == 0 {
		return nil
	}
	var out []TruthBreak
	from, to := dayTime(s.start), dayTime(s.start+s.days)
	for _, typ := range slices.Sorted(maps.Keys(layouts)) {
		s.eachRow(typ, from, to, func(r row) error { // the callback never fails
			if _, bad := s.malformed(r, raw.FormatCSV); bad { // the draw is the same for JSON
				out = append(out, TruthBreak{RuleID: "row_quarantined", PaymentID: r.v[r.l.idx["network_payment_id"]]})
			}
			return nil
		})
	}
	return out
}
