package sandbox

import (
	"slices"

	"github.com/shopspring/decimal"
)

// Fees on the server API's payments: this node charges its fee
// configuration (fees) on its TRANSFER legs: the sending fee where its
// account sends the first leg, the receiving fee where it receives the last;
// a partner receiving our payment charges a flat partnerFee. Quote elements
// and execution results carry the same fees, and fee_info.total_fees is
// their sum per currency. The statements and reports do not move with fees
// (they are billed to the customer, not moved on the account).

// partnerFee is the receiving fee a partner node charges on our payments.
var partnerFee = decimal.New(100, -2)

// chargeFees sets the fees of a's TRANSFER elements and results and its total_fees.
func (s *Sandbox) chargeFees(a *apiPayment, p *payment) {
	els := a.Contract.Quote.QuoteElements
	for i := range els {
		e := &els[i]
		if e.QuoteElementType != "TRANSFER" {
			continue
		}
		send, recv := decimal.Zero, decimal.Zero
		cur := string(e.TransferCurrencyCode)
		if i == 0 && isOurs(e.SenderAddress) {
			send = s.expectedFee("sender", "INITIAL", e.SenderAddress, cur, dec(e.SendingAmount))
		}
		if i == len(els)-1 {
			if isOurs(e.ReceiverAddress) {
				recv = s.expectedFee("receiver", "TERMINAL", e.ReceiverAddress, cur, dec(e.ReceivingAmount))
			} else if e.ReceiverAddress == p.receiver.addr() {
				recv = partnerFee
			}
		}
		e.SendingFee, e.ReceivingFee = num(fiat(send)), num(fiat(recv))
		if i < len(a.ExecutionResults) {
			a.ExecutionResults[i].SendingFee, a.ExecutionResults[i].ReceivingFee = e.SendingFee, e.ReceivingFee
		}
	}
	a.sumFees()
}

// sumFees sets total_fees to the TRANSFER fees of the execution results
// (of the quote elements before execution), per currency.
func (a *apiPayment) sumFees() {
	byCur := map[string]decimal.Decimal{}
	for i, e := range a.Contract.Quote.QuoteElements {
		if e.QuoteElementType != "TRANSFER" {
			continue
		}
		send, recv := e.SendingFee, e.ReceivingFee
		if i < len(a.ExecutionResults) {
			send, recv = a.ExecutionResults[i].SendingFee, a.ExecutionResults[i].ReceivingFee
		}
		cur := string(e.TransferCurrencyCode)
		byCur[cur] = byCur[cur].Add(dec(send)).Add(dec(recv))
	}
	a.Contract.FeeInfo.TotalFees = a.Contract.FeeInfo.TotalFees[:0]
	for _, c := range sortedKeys(byCur) {
		if !byCur[c].IsZero() {
			a.Contract.FeeInfo.TotalFees = append(a.Contract.FeeInfo.TotalFees, apiTotalFee{TotalFee: num(fiat(byCur[c])), FeeCurrency: c})
		}
	}
}

// expectedFee is the fee of this node's configuration on one side of a
// REGULAR payment's TRANSFER leg (DESIGN §3): slabs hold lower <= amount <
// upper, each fee rounded half-even to 2 decimals.
func (s *Sandbox) expectedFee(side, nodeType, account, currency string, amount decimal.Decimal) decimal.Decimal {
	roles := []string{"SENDING", "INSTITUTION_SENDING"}
	if side == "receiver" {
		roles = []string{"RECEIVING", "INSTITUTION_RECEIVING"}
	}
	name := account
	if i := len(account) - len("@"+nodeAddress); i > 0 && account[i:] == "@"+nodeAddress {
		name = account[:i]
	}
	total := decimal.Zero
	for _, f := range s.api.fees {
		if !slices.Contains(roles, f.RoleType) || f.PaymentType != "REGULAR" || f.NodeType != nodeType || f.CurrencyCode != currency ||
			(f.AccountName != "" && string(f.AccountName) != name) || f.PayoutMethod != "" {
			continue
		}
		if f.LowerLimit != "" && (amount.LessThan(dec(f.LowerLimit)) || !amount.LessThan(dec(f.UpperLimit))) {
			continue
		}
		if f.FeeType == "PERCENTAGE" {
			total = total.Add(amount.Mul(dec(f.Value)).Div(decimal.New(100, 0)).RoundBank(2))
		} else {
			total = total.Add(dec(f.Value).RoundBank(2))
		}
	}
	return total
}

func isOurs(addr string) bool {
	return slices.ContainsFunc(ours, func(a *account) bool { return a.addr() == addr })
}

func dec(n num) decimal.Decimal { return decimal.RequireFromString(string(n)) }

func sortedKeys(m map[string]decimal.Decimal) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// feeJudged: the payment moved money on a generated day, so a run over
// those days judges its fees.
func feeJudged(s *Sandbox, p *payment) bool {
	return moved(p) && unixDay(p.executed) < s.start+s.days
}

// feeOff charges a wrong fee, in turn: our leg's fee one cent over (the
// default tolerance is 0.00); our leg's fee not charged; our leg right but
// fee_info.total_fees one unit over in its currency.
func feeOff(_ *Sandbox, p *payment, in *injection) {
	p.edit = &edits{api: func(a *apiPayment) {
		leg, send := 0, true // our leg: the first one's sender, or the last one's receiver
		if !p.out {
			leg, send = len(a.ExecutionResults)-1, false
		}
		r := &a.ExecutionResults[leg]
		fee := &r.SendingFee
		if !send {
			fee = &r.ReceivingFee
		}
		switch in.variant % 3 {
		case 0:
			*fee = num(fiat(dec(*fee).Add(decimal.New(1, -2))))
		case 1:
			*fee = "0.00"
		default:
			a.sumFees()
			cur := string(a.Contract.Quote.QuoteElements[leg].TransferCurrencyCode)
			for i, t := range a.Contract.FeeInfo.TotalFees {
				if t.FeeCurrency == cur {
					a.Contract.FeeInfo.TotalFees[i].TotalFee = num(fiat(dec(t.TotalFee).Add(decimal.New(1, 0))))
				}
			}
			return
		}
		a.sumFees()
	}}
}

// slabBoundary: a judged payment from our US dollar account to a partner's
// in dollars (one TRANSFER leg, no exchange).
func slabBoundary(s *Sandbox, p *payment) bool {
	return feeJudged(s, p) && p.out && !p.odl && p.sender.name == "acme_usd"
}

// onSlabBoundary is fee_mismatch's decoy: the payment sends exactly 1000.00,
// the lower bound of the upper slab, and is charged that slab's fee.
func onSlabBoundary(_ *Sandbox, p *payment, _ *injection) {
	p.sent = decimal.New(100000, -2)
	p.received = p.sent
}
