package sandbox

import (
	"time"
)

// History: payments older than the window that payment_stale's label sweep
// finds (GET /v4/payments?with_labels=, whatever the date). They sit at
// indices past the day's payments, so no report, statement or dated list
// knows them: only a with_labels list serves them. Their times are set
// against the anchor, so each is as old as the truth says at the as-of.

// stuckAfter is payment_stale's default stuck_after.
const stuckAfter = 14 * 24 * time.Hour

// Sub-state labels (spec: POST /payments/{id}/sub_state).
const (
	labelForwarded  = "FORWARDED"
	labelCollection = "AWAITING_COLLECTION"
	stateForwarded  = "FORWARDED"
)

// historyItem is one labelled payment before the window: executed ago
// before the anchor, in state, with labels; a decoy is a near miss.
type historyItem struct {
	ago    time.Duration
	state  string
	labels []string
	decoy  bool
}

var historyItems = []historyItem{
	{ago: 40 * 24 * time.Hour, state: stateFailed, labels: []string{labelIrrecoverable}},
	{ago: 30 * 24 * time.Hour, state: stateExecuted, labels: []string{labelRecoverable}},
	{ago: 25 * 24 * time.Hour, state: stateExecuted, labels: []string{labelCollection}},
	{ago: 20 * 24 * time.Hour, state: stateForwarded, labels: []string{labelForwarded}},
	// Near misses: a FORWARDED payment an hour short of stuck_after; a
	// payout that failed recoverably, was amended and delivered.
	{ago: stuckAfter - time.Hour, state: stateForwarded, labels: []string{labelForwarded}, decoy: true},
	{ago: 35 * 24 * time.Hour, state: stateCompleted, labels: []string{labelRecoverable, labelAmend}, decoy: true},
}

// historyInjectors: one per item, so recordTruth reports each as payment_stale's.
var historyInjectors = func() []injector {
	out := make([]injector, len(historyItems))
	for i, h := range historyItems {
		out[i] = injector{rule: "payment_stale", decoy: h.decoy, apply: h.apply}
		if !h.decoy {
			out[i].account = ourAccount
		}
	}
	return out
}()

// apply gives the payment the item's state, times and labels.
func (h historyItem) apply(_ *Sandbox, p *payment, _ *injection) {
	p.state, p.executed, p.failed = h.state, p.quote, time.Time{} // retime moves executed to its place
	if h.state == stateFailed {
		p.failed = p.quote
	}
	labels := h.labels
	p.edit = &edits{api: func(a *apiPayment) {
		for _, l := range labels {
			a.InternalInfo.Labels = append(a.InternalInfo.Labels, apiLabel{l})
		}
	}}
}

// placeHistory registers the history payments, each on the day it was
// quoted, at an index no generated list reaches; it returns their keys.
func (s *Sandbox) placeHistory() {
	if s.cfg.BreaksPerDay <= 0 {
		return
	}
	for i, h := range historyItems {
		q := s.anchor.Add(-h.ago - 2*time.Minute).Truncate(time.Millisecond) // executed = quote + 2 min (retime)
		key := dayKey(unixDay(q), s.n+i)
		s.breaks[key] = &injection{inj: &historyInjectors[i], quote: q}
		s.history = append(s.history, key)
	}
}
