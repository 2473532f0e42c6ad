package sandbox

import (
	"cmp"
	"slices"
)

// Rows an injected break leaves out of the served data.
const (
	omitOps       uint8 = 1 << iota // the PAYMENT_OPS row
	omitRecon                       // every RECON row
	omitStatement                   // the statement entry on our account
)

// injector injects one rule kind of break into a payment. Each injected
// payment must be found by its rule, and by no other rule, as the truth says.
type injector struct {
	rule     string
	eligible func(*payment) bool
	apply    func(*payment)
	account  bool // the truth names the payment's account on this node
}

// injectors lists every rule kind the sandbox injects; add a row to add a kind.
var injectors = []injector{
	{"ops_missing_in_recon", moved, func(p *payment) { p.omit |= omitRecon }, false},
	{"recon_missing_in_ops", func(*payment) bool { return true }, func(p *payment) { p.omit |= omitOps }, false},
	{"payment_missing_in_statement", moved, func(p *payment) { p.omit |= omitStatement }, true},
}

// moved reports whether the payment moved money (COMPLETED or EXECUTED).
func moved(p *payment) bool { return p.state != stateFailed }

// injectBreaks picks, for every generated day and rule kind, BreaksPerDay
// distinct eligible payments, and records the truth.
func (s *Sandbox) injectBreaks() {
	s.breaks = map[uint64]*injector{}
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
					if !inj.eligible(p) {
						continue
					}
					s.breaks[dayKey(d, i)] = inj
					b := TruthBreak{RuleID: inj.rule, PaymentID: p.id}
					if inj.account {
						b.Account = p.ours.addr()
					}
					s.truth.Breaks = append(s.truth.Breaks, b)
					break
				}
			}
		}
	}
	slices.SortFunc(s.truth.Breaks, func(a, b TruthBreak) int {
		return cmp.Or(cmp.Compare(a.RuleID, b.RuleID), cmp.Compare(a.PaymentID, b.PaymentID), cmp.Compare(a.Account, b.Account))
	})
}
