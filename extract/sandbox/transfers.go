package sandbox

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Transfers of this node's ledger: GET /transfers lists them, and each side
// on one of our accounts has a TRANSFER (same currency) or EXCHANGE_TRANSFER
// (across currencies) statement entry with the transfer's id. A day holds
// two or three funding movements between the treasury and each account, one
// exchange transfer between two of our accounts, and one transfer with a
// partner node in the same currency. Injected breaks (BreaksPerDay of each
// kind a day) change a transfer, never a payment: an entry left out
// (transfer_missing_in_statement), a transfer not listed
// (statement_transfer_without_transfer), and the decoy, an entry booked
// under its transfer's internal id instead of its id.

// xfer is one transfer.
type xfer struct {
	id, internal, typ, state string
	sender, receiver         string          // account addresses
	amount, received         decimal.Decimal // amount is in the sender's currency, received in the receiver's
	at                       time.Time
	unbooked                 string // an address of ours whose entry is left out (injected)
	unlisted                 bool   // GET /transfers does not list it (injected)
	bookedAs                 string // the entries' transaction_id when not the transfer's id (decoy)
}

// Kinds of transfer injections, in the order they are placed each day.
const (
	xferUnbooked = iota
	xferUnlisted
	xferBookedAsInternal
	xferKinds
)

// partnerTransfers are the same-currency partners our accounts move funds with.
var partnerTransfers = [][2]*account{{ours[0], partners[4]}, {ours[1], partners[3]}}

// dayTransfers returns the day's transfers in a fixed order, injections applied.
func (s *Sandbox) dayTransfers(day int64) []xfer {
	var xs []xfer
	for k, a := range ours {
		r := s.rng(tagTransfer, uint64(day), uint64(k))
		for i := range 2 + r.IntN(2) {
			amount := decimal.New(int64(s.n)*(500+r.Int64N(501)), 0)
			x := xfer{id: newUUID(r), typ: "TRANSFER", state: stateCompleted, internal: fmt.Sprintf("treasury-%d-%d-%d", day, k, i),
				sender: treasury, receiver: a.addr(), amount: amount, received: amount,
				at: dayTime(day).Add(time.Duration(r.Int64N(dayMS)) * time.Millisecond)}
			if r.IntN(4) == 0 {
				x.amount = amount.Div(decimal.New(2, 0))
				x.received, x.sender, x.receiver = x.amount, a.addr(), treasury
			}
			xs = append(xs, x)
		}
	}
	r := s.rng(tagTransfer, uint64(day), uint64(len(ours)))
	from, to := ours[r.IntN(len(ours))], ours[0]
	if from == to {
		to = ours[1+r.IntN(len(ours)-1)]
	}
	amount := decimal.New(int64(s.n)*(100+r.Int64N(201)), 0)
	rate := currencies[to.currency].perUSD.Div(currencies[from.currency].perUSD)
	xs = append(xs, xfer{id: newUUID(r), typ: "EXCHANGE_TRANSFER", state: stateCompleted, internal: fmt.Sprintf("fx-%d", day),
		sender: from.addr(), receiver: to.addr(), amount: amount, received: amount.Mul(rate).Round(2),
		at: dayTime(day).Add(time.Duration(r.Int64N(dayMS)) * time.Millisecond)})
	pair := partnerTransfers[r.IntN(len(partnerTransfers))]
	x := xfer{id: newUUID(r), typ: "TRANSFER", state: stateExecuted, internal: fmt.Sprintf("nostro-%d", day),
		sender: pair[0].addr(), receiver: pair[1].addr(), amount: decimal.New(int64(s.n)*(50+r.Int64N(101)), 0),
		at: dayTime(day).Add(time.Duration(r.Int64N(dayMS)) * time.Millisecond)}
	if r.IntN(2) == 0 {
		x.sender, x.receiver = x.receiver, x.sender
	}
	x.received = x.amount
	xs = append(xs, x)
	s.injectTransfers(day, xs)
	return xs
}

// injectTransfers applies the day's transfer injections: BreaksPerDay of
// each kind, on distinct transfers drawn from the day's that have one side
// on our accounts.
func (s *Sandbox) injectTransfers(day int64, xs []xfer) {
	if s.cfg.BreaksPerDay == 0 || day < s.start || day >= s.start+s.days {
		return
	}
	r := s.rng(tagTransfer, uint64(day), 1<<32)
	var picked []int // transfers with one side ours: each injection is one truth item
	for _, j := range r.Perm(len(xs)) {
		if len(xs[j].oursides()) == 1 && len(picked) < xferKinds*s.cfg.BreaksPerDay {
			picked = append(picked, j)
		}
	}
	for i, j := range picked {
		x := &xs[j]
		switch i % xferKinds {
		case xferUnbooked:
			x.unbooked = x.oursides()[0]
		case xferUnlisted:
			x.unlisted = true
		default:
			x.bookedAs = "ledger-" + x.internal
		}
	}
}

// oursides are the addresses of the transfer's sides on our accounts (Accounts()).
func (x *xfer) oursides() []string {
	var out []string
	for _, a := range ours {
		if a.addr() == x.sender || a.addr() == x.receiver {
			out = append(out, a.addr())
		}
	}
	if len(out) == 2 && out[0] != x.sender {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// entryOn is the transfer's statement entry on account a, if it has one.
func (x *xfer) entryOn(a *account) (entry, bool) {
	addr := a.addr()
	if (x.sender != addr && x.receiver != addr) || x.unbooked == addr {
		return entry{}, false
	}
	e := entry{id: x.id, typ: x.typ, state: x.state, internal: x.internal, sender: x.sender, receiver: x.receiver,
		change: x.received, at: x.at}
	if x.sender == addr {
		e.change = x.amount.Neg()
	}
	if x.bookedAs != "" {
		e.id = x.bookedAs
	}
	return e, true
}

// transfers are account a's transfer entries of the day.
func (s *Sandbox) transfers(a *account, day int64) []entry {
	var es []entry
	for _, x := range s.dayTransfers(day) {
		if e, ok := x.entryOn(a); ok {
			es = append(es, e)
		}
	}
	return es
}

// listedTransfers are the transfers GET /transfers lists: those of the
// generated days created before now, not injected as unlisted.
func (s *Sandbox) listedTransfers(now time.Time) []transferJSON {
	var out []transferJSON
	for d := s.start; d < s.start+s.days; d++ {
		for _, x := range s.dayTransfers(d) {
			if x.unlisted || !x.at.Before(now) {
				continue
			}
			owner := x.sender
			if sides := x.oursides(); len(sides) > 0 {
				owner = sides[0]
			}
			out = append(out, transferJSON{TransferID: x.id, State: x.state, OwnerAddress: owner,
				SenderAddress: x.sender, ReceiverAddress: x.receiver, Amount: fiat(x.amount),
				InternalID: text(x.internal), CreatedAt: ts(x.at), UserInfo: []any{}, Labels: []any{}})
		}
	}
	return out
}

// transferTruth lists the transfer injections as the rules report them: no
// payment id (a transfer is not a payment), the account of the side judged.
func (s *Sandbox) transferTruth() (breaks, pending, decoys []TruthBreak) {
	if s.cfg.BreaksPerDay == 0 {
		return nil, nil, nil
	}
	for d := s.start; d < s.start+s.days; d++ {
		for _, x := range s.dayTransfers(d) {
			switch {
			case x.unbooked != "":
				b := TruthBreak{RuleID: "transfer_missing_in_statement", Account: x.unbooked}
				if x.at.Add(grace).After(s.anchor) {
					pending = append(pending, b)
				} else {
					breaks = append(breaks, b)
				}
			case x.unlisted:
				breaks = append(breaks, TruthBreak{RuleID: "statement_transfer_without_transfer", Account: x.oursides()[0]})
			case x.bookedAs != "":
				// Neither transfer_missing_in_statement nor statement_transfer_without_transfer may report it.
				decoys = append(decoys, TruthBreak{RuleID: "transfer_missing_in_statement", Account: x.oursides()[0]})
			}
		}
	}
	return breaks, pending, decoys
}
