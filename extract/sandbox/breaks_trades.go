package sandbox

import "github.com/shopspring/decimal"

// Breaks of liquidation_trades_mismatch: a COMPLETED liquidation whose trade
// requests disagree with its destination_amount, or hold a FAILED trade
// whose fiat is stranded. The liquidation's own totals stay as they were,
// so liquidation_amount_mismatch and liquidation_not_delivered are quiet.

// tradesOff changes the trade requests, in turn: the first one a unit over;
// the last one FAILED with its fiat not available after the failure. A
// decoy is every trade one cent over (exactly the tolerance, per trade), or
// a FAILED trade whose fiat is available after the failure.
func tradesOff(decoy bool) func(*Sandbox, *payment, *injection) {
	cent := decimal.New(1, -2)
	return func(_ *Sandbox, p *payment, in *injection) {
		p.edit = &edits{liquidation: func(l *liquidation) {
			trs := l.TradeRequests
			last := &trs[len(trs)-1]
			switch v := in.variant; {
			case decoy && v%2 == 0:
				for i := range trs {
					trs[i].Amount = num(fiat(decimal.RequireFromString(string(trs[i].Amount)).Add(cent)))
				}
			case decoy:
				last.Status, last.FiatAvailableAfterFailure = stateFailed, true
			case v%2 == 0:
				trs[0].Amount = num(fiat(decimal.RequireFromString(string(trs[0].Amount)).Add(decimal.New(1, 0))))
			default:
				last.Status = stateFailed
			}
		}}
	}
}
