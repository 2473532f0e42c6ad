package sandbox

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Breaks of balance_snapshot_mismatch, which judges one snapshot per account
// (the balances answer at the sandbox's now): the answer drifts from the
// ledger on two accounts, one cent over on the first, 250 under on the
// second. The near miss is on the third: a transfer booked a minute after
// the snapshot, which the statements of the day show and the snapshot
// rightly leaves out.

// balanceDrift is what the balances answer adds to account a's ledger balance.
func (s *Sandbox) balanceDrift(a *account) decimal.Decimal {
	switch {
	case s.cfg.BreaksPerDay == 0:
		return decimal.Zero
	case a == ours[0]:
		return decimal.New(1, -2)
	case a == ours[1]:
		return decimal.New(-250, 0)
	}
	return decimal.Zero
}

// lateTransfer is the near miss's transfer from the treasury to the third
// account, booked a minute after the truth's as-of. It exists only when
// that minute is on the day after the generated days (a run the morning
// after, as the nightly one): the statements a run pulls reach the end of
// that day, and no run over the generated days judges the entry itself.
func (s *Sandbox) lateTransfer() (xfer, bool) {
	at := s.anchor.Add(time.Minute)
	if s.cfg.BreaksPerDay == 0 || unixDay(at) != s.start+s.days || unixDay(s.anchor) != unixDay(at) {
		return xfer{}, false
	}
	amount := decimal.New(int64(s.n)*100, 0)
	return xfer{id: newUUID(s.rng(tagTransfer, uint64(unixDay(at)), 1<<33)), typ: "TRANSFER", state: stateCompleted,
		internal: fmt.Sprintf("treasury-late-%d", unixDay(at)), sender: treasury, receiver: ours[2].addr(),
		amount: amount, received: amount, at: at}, true
}

// balanceTruth lists the drifted accounts as breaks, and the near miss as a decoy.
func (s *Sandbox) balanceTruth() (breaks, pending, decoys []TruthBreak) {
	for _, a := range ours {
		if !s.balanceDrift(a).IsZero() {
			breaks = append(breaks, TruthBreak{RuleID: "balance_snapshot_mismatch", Account: a.addr()})
		}
	}
	if x, ok := s.lateTransfer(); ok {
		decoys = append(decoys, TruthBreak{RuleID: "balance_snapshot_mismatch", Account: x.receiver})
	}
	return breaks, nil, decoys
}
