package sandbox

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Breaks of the liquidation service and the server API's payments (the
// rows of injectors after fx_rate_outlier). Each changes the records
// through edits.liquidation or edits.api, and the payment's state where
// the reports must agree with it.

// Payment states of the server API that never reached EXECUTED (spec: states and transitions).
var unfinished = []string{"ACCEPTED", "LOCKED", "LOCK_DECLINED", "PREPARED", "SETTLEMENT_DECLINED"}

// Labels of a payout that failed (spec: labels and the amend flow).
const (
	labelRecoverable   = "OUTBOUND_TRANSFER_FAILED_RECOVERABLY"
	labelIrrecoverable = "OUTBOUND_TRANSFER_FAILED_IRRECOVERABLY"
	stateReturned      = "RETURNED"
)

// liquidationLag is the latest a liquidation is created after its payment.
const liquidationLag = 4 * time.Second

// contractTTL is how long after its creation a payment's contract expires (the spec's default).
const contractTTL = 300 * time.Second

// unliquidated: the payment has no liquidation, so RECON may disagree with
// PAYMENT_OPS about its received currency without a liquidation disagreeing too.
func unliquidated(_ *Sandbox, p *payment) bool { return !liquidates(p) }

func liquidated(_ *Sandbox, p *payment) bool { return liquidates(p) }

// receivedCompleted: a COMPLETED payment with a liquidation.
func receivedCompleted(_ *Sandbox, p *payment) bool {
	return liquidates(p) && p.state == stateCompleted
}

// liquidatedOnDay: a payment with a liquidation created on a generated day,
// so a run over the generated days judges the liquidation (by its created_at).
func liquidatedOnDay(s *Sandbox, p *payment) bool {
	return liquidates(p) && unixDay(p.created.Add(liquidationLag)) < s.start+s.days
}

// odlMoved: a cross-currency payment that moved money: it may be made FAILED.
func odlMoved(_ *Sandbox, p *payment) bool { return p.odl && moved(p) }

// createdOnDay: as odlMoved, and created on a generated day, so a run over
// the generated days judges its server API record (by its created_at).
func createdOnDay(s *Sandbox, p *payment) bool {
	return odlMoved(s, p) && unixDay(p.created) < s.start+s.days
}

// liquidationCreated is when the payment's liquidation was created.
func liquidationCreated(s *Sandbox, p *payment) time.Time { return s.liquidation(p).created }

// staleSince is when payment_stale's wait starts: the contract's expiry of a
// payment that never executed, the execution of one whose payout failed
// recoverably; none (zero) for an irrecoverable failure.
func staleSince(_ *Sandbox, p *payment) time.Time {
	switch {
	case slices.Contains(unfinished, p.state):
		return p.created.Add(contractTTL)
	case p.state == stateExecuted:
		return p.executed
	}
	return time.Time{}
}

func dropLiquidation(_ *Sandbox, p *payment, _ *injection) {
	p.edit = &edits{liquidation: func(l *liquidation) { l.omit = true }}
}

// liquidationAmount moves destination_amount away from the RECON adjusted
// proceeds, in turn: two cents over (one past the default tolerance of one
// cent), 1.00 under, or in another currency. A decoy is exactly one cent
// over, its currency in lower case, or one cent under.
func liquidationAmount(decoy bool) func(*Sandbox, *payment, *injection) {
	cent := decimal.New(1, -2)
	return func(_ *Sandbox, p *payment, in *injection) {
		p.edit = &edits{liquidation: func(l *liquidation) {
			amount := decimal.RequireFromString(string(l.DestinationAmount))
			switch v := in.variant; {
			case decoy && v%2 == 0:
				amount = amount.Add(cent)
				l.DestinationCurrency = strings.ToLower(l.DestinationCurrency)
			case decoy:
				amount = amount.Sub(cent)
			case v%3 == 0:
				amount = amount.Add(cent.Add(cent))
			case v%3 == 1:
				amount = amount.Sub(decimal.New(1, 0))
			default:
				l.DestinationCurrency = "XAF"
			}
			// The trade requests still add up to destination_amount: the
			// liquidation agrees with itself, not with RECON.
			last := &l.TradeRequests[len(l.TradeRequests)-1]
			delta := amount.Sub(decimal.RequireFromString(string(l.DestinationAmount)))
			last.Amount = num(fiat(decimal.RequireFromString(string(last.Amount)).Add(delta)))
			l.DestinationAmount = num(fiat(amount))
		}}
	}
}

// net is what an execution delivers: its gross fiat less its fee.
func (x tradeExecution) net() decimal.Decimal {
	return decimal.RequireFromString(string(x.DestinationAmount)).Sub(decimal.RequireFromString(string(x.Fee)))
}

// undelivered leaves part of a liquidation's fiat undelivered, in turn:
// FAILED (nothing executed), PARTIALLY_COMPLETED (its last execution
// FAILED), COMPLETED with total_fiat_executed one cent short of total_fiat,
// or COMPLETED with the last execution's fiat non-deliverable. The decoy is a
// COMPLETED liquidation whose first trade had a FAILED execution before the
// one that filled it: every total agrees.
func undelivered(decoy bool) func(*Sandbox, *payment, *injection) {
	return func(s *Sandbox, p *payment, in *injection) {
		retryID := newUUID(s.rng(tagRetry, uint64(p.day), uint64(p.idx)))
		p.edit = &edits{liquidation: func(l *liquidation) {
			total := decimal.RequireFromString(string(l.ExecutionSummary.TotalFiat))
			ts, last := &l.TradingSummary, &l.TradeRequests[len(l.TradeRequests)-1]
			lastExec := &last.TradeExecutions[len(last.TradeExecutions)-1]
			switch {
			case decoy:
				first := &l.TradeRequests[0]
				retry := first.TradeExecutions[0]
				retry.ID, retry.Status, retry.DestinationAmount, retry.Fee = retryID, stateFailed, "0.00", "0.00"
				first.TradeExecutions = append([]tradeExecution{retry}, first.TradeExecutions...)
			case in.variant%4 == 0:
				l.Status = stateFailed
				for i := range l.TradeRequests {
					tr := &l.TradeRequests[i]
					tr.Status, tr.Amount = stateFailed, "0.00"
					for j := range tr.TradeExecutions {
						tr.TradeExecutions[j].Status = stateFailed
					}
				}
				l.ExecutionSummary.TotalFiat, ts.TotalFiatExecuted = "0.00", "0.00"
			case in.variant%4 == 1:
				short := lastExec.net()
				lastExec.Status, l.Status = stateFailed, "PARTIALLY_COMPLETED"
				last.Status = "PARTIALLY_COMPLETED"
				if len(last.TradeExecutions) == 1 {
					last.Status = stateFailed
				}
				last.Amount = num(fiat(decimal.RequireFromString(string(last.Amount)).Sub(short)))
				l.ExecutionSummary.TotalFiat = num(fiat(total.Sub(short)))
				ts.TotalFiatExecuted = l.ExecutionSummary.TotalFiat
			case in.variant%4 == 2:
				ts.TotalFiatExecuted = num(fiat(total.Sub(decimal.New(1, -2))))
			default:
				ts.TotalFiatNonDeliverable = num(fiat(lastExec.net()))
			}
		}}
	}
}

// stuck leaves a liquidation unfinished, in turn CREATED (no trade yet),
// QUEUED (its trades queued) or STARTED (the first execution done, the rest
// in flight).
func stuck(_ *Sandbox, p *payment, in *injection) {
	p.edit = &edits{liquidation: func(l *liquidation) {
		total := decimal.RequireFromString(string(l.ExecutionSummary.TotalFiat))
		done := decimal.Zero
		switch in.variant % 3 {
		case 0:
			l.Status, l.TradeRequests = liqCreated, nil
		case 1:
			l.Status = "QUEUED"
			for i := range l.TradeRequests {
				tr := &l.TradeRequests[i]
				tr.Status, tr.Amount, tr.TradeExecutions, tr.ModifiedAt = "QUEUED", "0.00", []tradeExecution{}, tr.CreatedAt
			}
		default:
			l.Status = "STARTED"
			for i := range l.TradeRequests {
				tr := &l.TradeRequests[i]
				tr.Status, tr.Amount = "QUEUED", "0.00"
				if i == 0 {
					tr.Status, tr.TradeExecutions = "STARTED", tr.TradeExecutions[:1]
					done = tr.TradeExecutions[0].net()
					tr.Amount, tr.ModifiedAt = num(fiat(done)), tr.TradeExecutions[0].ExecutedAt
					continue
				}
				tr.TradeExecutions, tr.ModifiedAt = []tradeExecution{}, tr.CreatedAt
			}
		}
		l.ModifiedAt = l.CreatedAt
		if len(l.TradeRequests) > 0 && l.Status == "STARTED" {
			l.ModifiedAt = l.TradeRequests[0].ModifiedAt
		}
		l.ExecutionSummary.TotalFiat, l.TradingSummary.TotalFiatExecuted = num(fiat(done)), num(fiat(done))
		l.TradingSummary.TotalFiatInFlight = num(fiat(total.Sub(done)))
	}}
}

// setState gives the server API record another state than the reports',
// changed at modified (after which nothing changed).
func (a *apiPayment) setState(state string, modified time.Time) {
	a.PaymentState, a.CompletedAt, a.ReturnedAt = state, "", ""
	switch state {
	case stateCompleted:
		a.CompletedAt = text(ts(modified))
	case stateReturned:
		a.CompletedAt, a.ReturnedAt = text(ts(modified.Add(-time.Minute))), text(ts(modified))
	case stateFailed: // failed before executing: no funds moved (failed_payment_unrecovered stays quiet)
		a.ExecutedAt, a.executed, a.ExecutionResults = "", time.Time{}, []apiResult{}
	}
	a.modified, a.ModifiedAt = modified, ts(modified)
}

// stateMismatch makes the server API disagree with PAYMENT_OPS on a terminal
// state, in turn: the report says FAILED and the API COMPLETED; COMPLETED
// and FAILED; COMPLETED and EXECUTED (the API went back); COMPLETED and
// RETURNED two hours after settlement, long before the report was generated
// (DESIGN §3). A decoy is a state the API may reach after the report's:
// EXECUTED then COMPLETED, or COMPLETED then RETURNED an hour after the
// last generated day, after any report of those days was generated.
func stateMismatch(decoy bool) func(*Sandbox, *payment, *injection) {
	return func(s *Sandbox, p *payment, in *injection) {
		report, api, after := stateCompleted, stateExecuted, 10*time.Minute
		var at time.Time // when set, the API's change is at this time
		switch v := in.variant; {
		case decoy && v%2 == 0:
			report, api = stateExecuted, stateCompleted
		case decoy:
			api, at = stateReturned, dayTime(s.start+s.days).Add(time.Hour)
		case v%4 == 0:
			report, api = stateFailed, stateCompleted
		case v%4 == 1:
			api = stateFailed
		case v%4 == 2:
			after = 0
		default:
			api, after = stateReturned, 2*time.Hour
		}
		if report == stateFailed {
			fail(p)
		} else {
			p.state = report
		}
		if api == stateReturned { // a whole return (returns.go), which the report does not show
			if at.IsZero() {
				at = p.executed.Add(after)
			}
			p.ret = &ret{id: returnID(s, p), lag: at.Sub(p.executed)}
			return
		}
		p.edit = &edits{api: func(a *apiPayment) {
			settled := p.executed
			if p.state == stateFailed {
				settled = p.failed
			}
			if at.IsZero() {
				at = settled.Add(after)
			}
			a.setState(api, at)
		}}
	}
}

// stale leaves the payment stuck, in turn: in a state before EXECUTED (one
// of unfinished, in turn) past its contract's expiry, so no transaction ever
// ran (no RECON rows, no statement entry, no liquidation); EXECUTED with its
// payout failed recoverably; FAILED with its payout failed irrecoverably.
func stale(_ *Sandbox, p *payment, in *injection) {
	var label string
	switch in.variant % 3 {
	case 0:
		state := unfinished[in.variant/3%len(unfinished)]
		p.state, p.executed = state, time.Time{}
		p.omit |= omitRecon
		p.edit = &edits{api: func(a *apiPayment) {
			a.modified = p.created.Add(2 * time.Second)
			if state == "ACCEPTED" || state == "LOCK_DECLINED" {
				a.LockedAt, a.modified = "", p.created.Add(time.Second)
			}
			a.ModifiedAt = ts(a.modified)
		}}
		return
	case 1:
		p.state, label = stateExecuted, labelRecoverable
	default:
		fail(p)
		label = labelIrrecoverable
	}
	p.edit = &edits{api: func(a *apiPayment) {
		a.InternalInfo.Labels = append(a.InternalInfo.Labels, apiLabel{label})
		if p.state == stateExecuted {
			a.modified = p.executed.Add(5 * time.Minute)
			a.ModifiedAt = ts(a.modified)
		}
	}}
}

// deliveredAfterAmend is payment_stale's decoy: a COMPLETED payment still
// carrying OUTBOUND_TRANSFER_FAILED_RECOVERABLY, its payout amended and delivered.
func deliveredAfterAmend(_ *Sandbox, p *payment, _ *injection) {
	p.state = stateCompleted
	p.edit = &edits{api: func(a *apiPayment) {
		a.InternalInfo.Labels = append(a.InternalInfo.Labels, apiLabel{labelRecoverable}, apiLabel{labelAmend})
	}}
}
