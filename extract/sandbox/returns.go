package sandbox

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Returns: a RETURNED payment names its return payment, which the server
// API serves (payment_type RETURN, returns_payment_with_id = the original,
// one TRANSFER execution result per side, the whole amount back), and the
// ledger books the reversing PAYMENT entry of the return on our account
// (transaction_id = the return, returns_payment_with_id = the original); the
// original's own entry names its return in returned_by_payment_with_id.
// Only injected payments return (breaks_returns.go, and the returns of
// payment_state_mismatch), so the list of returns is small.

// ret is the return of a payment.
type ret struct {
	id       string
	lag      time.Duration   // returned_at after the payment executed
	bookLag  time.Duration   // the reversing entry after returned_at
	unlisted bool            // the server API does not serve the return payment
	unbooked bool            // the ledger books no reversing entry
	off      decimal.Decimal // added to the reversing entry's change
	reported bool            // the reports say RETURNED (they are generated after the return)
}

// returnBit marks a list key (dayKey) as the return payment of the payment it names.
const returnBit = uint64(1) << 63

func returnID(s *Sandbox, p *payment) string {
	return newUUID(s.rng(tagReturn, uint64(p.day), uint64(p.idx)))
}

// returnedAt is when the payment was RETURNED (and its return executed).
func (p *payment) returnedAt() time.Time { return p.executed.Add(p.ret.lag) }

// reportState is the payment's state in the reports.
func (p *payment) reportState() string {
	if p.ret != nil && p.ret.reported {
		return stateReturned
	}
	return p.state
}

// reversal is the change the return makes on our account: the original's change, reversed.
func (p *payment) reversal() decimal.Decimal {
	if p.out {
		return p.sent
	}
	return p.received.Neg()
}

// returnEntry is the reversing entry of the return on our account, if the ledger booked it.
func (p *payment) returnEntry() (entry, bool) {
	if p.ret == nil || p.ret.unbooked {
		return entry{}, false
	}
	return entry{id: p.ret.id, typ: "PAYMENT", state: stateCompleted, e2e: p.returnE2E(), internal: p.internalID() + "-r",
		sender: p.receiver.addr(), receiver: p.sender.addr(), change: p.reversal().Add(p.ret.off),
		at: p.returnedAt().Add(p.ret.bookLag), returns: p.id}, true
}

func (p *payment) returnE2E() string { return "RTN" + p.e2e }

// returnKeys lists the day keys of the payments with a return, in order.
func (s *Sandbox) returnKeys() []uint64 {
	var out []uint64
	for k := range s.breaks {
		if s.byDayKey(k).ret != nil {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// reversals are account a's reversing entries created in [from, to).
func (s *Sandbox) reversals(a *account, from, to time.Time) []entry {
	var es []entry
	for _, k := range s.returns {
		if p := s.byDayKey(k); p.ours == a {
			if e, ok := p.returnEntry(); ok && within(e.at, from, to) {
				es = append(es, e)
			}
		}
	}
	return es
}

// record renders the server API record of a list key.
func (s *Sandbox) record(k uint64) *apiPayment {
	if k&returnBit != 0 {
		return s.apiReturn(s.byDayKey(k &^ returnBit))
	}
	return s.apiPayment(s.byDayKey(k))
}

type listedReturn struct {
	key uint64
	at  time.Time
	id  string
}

// listReturns are the returned payments and the return payments a
// GET /payments list holds: range field in [after, before), every label given.
func (s *Sandbox) listReturns(field string, after, before time.Time, labels []string) []listedReturn {
	rf := rangeFields[field]
	var out []listedReturn
	for _, k := range s.returns {
		p := s.byDayKey(k)
		if unknown(p) {
			continue
		}
		recs := []*apiPayment{s.apiPayment(p)}
		if !p.ret.unlisted {
			recs = append(recs, s.apiReturn(p))
		}
		for i, a := range recs {
			if !within(rf.at(a), after, before) || slices.ContainsFunc(labels, func(l string) bool {
				return !slices.Contains(a.InternalInfo.Labels, apiLabel{l})
			}) {
				continue
			}
			key := k
			if i == 1 {
				key |= returnBit
			}
			out = append(out, listedReturn{key, rf.at(a), a.PaymentID})
		}
	}
	return out
}

// apiReturn is the server API record of p's return payment: created, accepted
// and locked in the three seconds before it executes at returned_at, COMPLETED a minute later.
func (s *Sandbox) apiReturn(p *payment) *apiPayment {
	r := s.rng(tagReturn, uint64(p.day), uint64(p.idx)+1<<32)
	at := p.returnedAt()
	a := &apiPayment{
		PaymentID: p.ret.id, ContractHash: fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()),
		PaymentState: stateCompleted, PaymentType: "RETURN", Validator: nodeAddress, ReturnsPaymentWithID: text(p.id),
		CryptoTransactionID: newUUID(r), ExecutionCondition: base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%016x%016x", r.Uint64(), r.Uint64())),
		AcceptedAt: text(ts(at.Add(-2 * time.Second))), LockedAt: text(ts(at.Add(-time.Second))),
		ExecutedAt: text(ts(at)), CompletedAt: text(ts(at.Add(time.Minute))),
		created: at.Add(-3 * time.Second), executed: at, modified: at.Add(time.Minute),
		NetworkInfo: []apiNodeInfo{{p.receiver.node, []any{}}, {p.sender.node, []any{}}},
		UserInfo:    []apiUserInfo{{NodeAddress: nodeAddress, Accepted: []any{}, Locked: []any{}, Executed: []any{}, Completed: []any{}}},
	}
	a.ModifiedAt = ts(a.modified)
	a.InternalInfo = apiInternalInfo{ConnectorRole: "SENDING", Labels: []apiLabel{}, InternalID: text(p.internalID() + "-r")}
	if p.out {
		a.InternalInfo.ConnectorRole = "RECEIVING"
	}
	c := &a.Contract
	c.SenderEndToEndID, c.CreatedAt, c.ExpiresAt = p.returnE2E(), ts(a.created), ts(a.created.Add(contractTTL))
	c.FeeInfo.Nodes, c.FeeInfo.TotalFees = map[string][]any{}, []apiTotalFee{}
	q := &c.Quote
	q.QuoteID, q.CreatedAt, q.ExpiresAt = newUUID(r), ts(a.created), ts(a.created.Add(contractTTL))
	q.Type, q.PriceGuarantee = "SENDER_AMOUNT", "FIRM"
	q.SenderAddress, q.ReceiverAddress = p.receiver.addr(), p.sender.addr()
	q.Amount, q.CurrencyCode, q.CurrencyCodeFilter = fiat(p.received), p.receiver.currency, text(p.sender.currency)
	// The whole amount goes back: one TRANSFER, or two through the exchanges' accounts across currencies.
	type leg struct {
		from, to, cur string
		amount        decimal.Decimal
	}
	legs := []leg{{p.receiver.addr(), p.sender.addr(), p.receiver.currency, p.received}}
	if p.odl {
		src, dst := currencies[p.receiver.currency].exchange, currencies[p.sender.currency].exchange
		legs = []leg{
			{p.receiver.addr(), "odl_" + strings.ToLower(p.receiver.currency) + "@" + src, p.receiver.currency, p.received},
			{"odl_" + strings.ToLower(p.sender.currency) + "@" + dst, p.sender.addr(), p.sender.currency, p.sent},
		}
	}
	a.ExecutionResults = []apiResult{}
	for i, l := range legs {
		amount := num(fiat(l.amount))
		q.QuoteElements = append(q.QuoteElements, apiElement{QuoteElementID: newUUID(r), QuoteElementType: "TRANSFER",
			QuoteElementOrder: fmt.Sprint(i + 1), SenderAddress: l.from, ReceiverAddress: l.to, SendingAmount: amount,
			ReceivingAmount: amount, SendingFee: "0", ReceivingFee: "0", TransferCurrencyCode: text(l.cur)})
		a.ExecutionResults = append(a.ExecutionResults, apiResult{ExecutionResultID: newUUID(r), ExecutionTimestamp: ts(at),
			ExecutionResultType: "TRANSFER", ExecutionResultOrder: i + 1, SenderAddress: l.from, ReceiverAddress: l.to,
			SendingAmount: amount, ReceivingAmount: amount, SendingFee: "0", ReceivingFee: "0"})
	}
	return a
}
