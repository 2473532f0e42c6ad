package sandbox

import (
	"time"

	"github.com/shopspring/decimal"
)

// Breaks of return_unreconciled and of failed_payment_unrecovered's second
// part (a FAILED payment whose funds moved). A return comes returnLag after
// the payment executed; the reports, generated later, say RETURNED.

const (
	returnLag   = 3 * time.Hour
	returnGrace = 48 * time.Hour // return_unreconciled's default grace
)

// returnable: a COMPLETED payment that a run over the generated days sees
// RETURNED (the return falls on a generated day).
func returnable(s *Sandbox, p *payment) bool {
	return p.state == stateCompleted && !unknown(p) && unixDay(p.executed.Add(returnLag)) < s.start+s.days
}

// returnableNextDay: as returnable, and the day after the return is a generated day too.
func returnableNextDay(s *Sandbox, p *payment) bool {
	return returnable(s, p) && unixDay(p.executed.Add(returnLag))+1 < s.start+s.days
}

// returnDue shifts the return so that the truth's grace (24 h) measures return_unreconciled's (48 h).
func returnDue(_ *Sandbox, p *payment) time.Time { return p.returnedAt().Add(returnGrace - grace) }

// Kinds of returns.
const (
	returnBroken   = iota // a break of return_unreconciled
	returnOrdinary        // reconciled: quiet
	returnNextDay         // the reversing entry booked at 01:00 the next day, inside the grace: quiet
)

// returned returns the payment. A break leaves, in turn, the return payment
// unknown to the server API (the ledger booked its entry, which
// statement_entry_without_payment reports: returnTruth), the reversing entry
// unbooked, or the entry one cent short.
func returned(kind int) func(*Sandbox, *payment, *injection) {
	return func(s *Sandbox, p *payment, in *injection) {
		p.ret = &ret{id: returnID(s, p), lag: returnLag, reported: true}
		switch v := in.variant; {
		case kind == returnNextDay:
			at := p.executed.Add(returnLag)
			p.ret.bookLag = dayTime(unixDay(at) + 1).Add(time.Hour).Sub(at)
		case kind == returnOrdinary:
		case v%3 == 0:
			p.ret.unlisted = true
		case v%3 == 1:
			p.ret.unbooked = true
		default:
			p.ret.off = decimal.New(-1, -2)
		}
	}
}

// failableOut: a cross-currency payment we send that ends on a generated day.
func failableOut(s *Sandbox, p *payment) bool { return p.out && failable(s, p) }

// movedUnrecovered fails the payment after its funds left our account: the
// server API shows, in turn, executed_at or the first TRANSFER execution
// result; a break has no FAILURE_CONVERSION_SSA row (and no reversing
// entry), a decoy shows both and keeps its row (recovery COMPLETED).
func movedUnrecovered(decoy bool) func(*Sandbox, *payment, *injection) {
	return func(s *Sandbox, p *payment, in *injection) {
		fail(p)
		if !decoy {
			p.omit |= omitFailure
		}
		id := newUUID(s.rng(tagReturn, uint64(p.day), uint64(p.idx)+2<<32))
		p.edit = &edits{api: func(a *apiPayment) {
			if decoy || in.variant%2 == 0 {
				a.ExecutedAt, a.executed = text(ts(p.failed)), p.failed
			}
			if decoy || in.variant%2 == 1 {
				e := a.Contract.Quote.QuoteElements[0] // the TRANSFER from our account
				a.ExecutionResults = []apiResult{{ExecutionResultID: id, ExecutionTimestamp: ts(p.failed),
					ExecutionResultType: e.QuoteElementType, ExecutionResultOrder: 1, SenderAddress: e.SenderAddress,
					ReceiverAddress: e.ReceiverAddress, SendingAmount: e.SendingAmount, ReceivingAmount: e.ReceivingAmount,
					SendingFee: e.SendingFee, ReceivingFee: e.ReceivingFee, TransferCurrencyCode: e.TransferCurrencyCode}}
				a.sumFees()
			}
		}}
	}
}

// returnTruth lists what the returns cause beside their own rule: the
// reversing entry of a return unknown to the server API matches no payment
// (statement_entry_without_payment, grace 24 h from the entry).
func (s *Sandbox) returnTruth() (breaks, pending, decoys []TruthBreak) {
	for _, k := range s.returns {
		p := s.byDayKey(k)
		e, ok := p.returnEntry()
		if !ok || !p.ret.unlisted || s.breaks[k].inj.rule != "return_unreconciled" {
			continue
		}
		b := TruthBreak{RuleID: "statement_entry_without_payment", PaymentID: e.id, Account: p.ours.addr()}
		if e.at.Add(grace).After(s.anchor) {
			pending = append(pending, b)
		} else {
			breaks = append(breaks, b)
		}
	}
	return breaks, pending, nil
}
