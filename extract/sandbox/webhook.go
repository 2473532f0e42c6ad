package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Webhook notifications (spec server-api.md, Events): the payments of
// orchestration flows, a deterministic subset, notify each status change.
// With Config.WebhookURL set, New plans them; the server API serves each
// one at GET /v4/orchestration/payment/notification/{msg_id}, and Deliver
// POSTs {msg_id} to the callback: out of order, some twice, retried on a
// non-2xx answer. Injected (and in the truth): a dropped notification
// (notification_missing_transition), a notification that contradicts the
// payment (notification_state_mismatch) and a delivered msg_id the server
// does not know, whose GET answers 404 (notification_unfetched).

// Webhook delivery timing, compressed for the sandbox (the provider retries
// every 5 minutes, at most 12 times).
const (
	webhookRetryDelay = 100 * time.Millisecond
	webhookRetries    = 12
	webhookWorkers    = 8
	orchestrationPct  = 10 // % of the payments without an injected break that use orchestration flows
	webhookInjections = 3  // breaks of each notification rule
	notificationGrace = time.Hour
)

// notificationJSON is GET /orchestration/payment/notification/{msg_id}.
type notificationJSON struct {
	UUID    string          `json:"uuid"`
	Type    string          `json:"notification_type"`
	Version string          `json:"notification_version"`
	Status  string          `json:"notification_status"`
	Payload notificationPay `json:"notification_payload"`
	Created string          `json:"created_at"`
	Updated string          `json:"modified_at"`
}

type notificationPay struct {
	SenderEndToEndID         string  `json:"sender_end_to_end_id"`
	PaymentID                string  `json:"payment_id"`
	PaymentStatus            string  `json:"payment_status"`
	PreviousPaymentStatus    *string `json:"previous_payment_status"`
	ConnectorRole            string  `json:"connector_role"`
	PaymentType              string  `json:"payment_type"`
	PayoutMethod             *string `json:"payout_method"`
	OriginalSenderEndToEndID *string `json:"original_sender_end_to_end_id"`
	Output                   any     `json:"output"`
}

// webhookState is what New planned: the notifications served and the
// deliveries Deliver makes, in its order.
type webhookState struct {
	byID       map[string]json.RawMessage
	deliveries []string // msg_ids, duplicates included, in delivery order
}

// flow is the notifications of one orchestration payment.
type flow struct {
	p     *payment
	notes []notificationJSON
	taken bool // an injection changed it
}

// planWebhooks plans the notifications and deliveries and adds the
// injected ones to the truth.
func (s *Sandbox) planWebhooks() {
	s.hooks.byID = map[string]json.RawMessage{}
	if s.cfg.WebhookURL == "" {
		return
	}
	r := s.rng(tagWebhook, 0, 0)
	var flows []*flow
	for d := s.start; d < s.start+s.days; d++ {
		for i := range s.n {
			if s.breaks[dayKey(d, i)] != nil || s.rng(tagWebhook, uint64(d), uint64(i)).IntN(100) >= orchestrationPct {
				continue
			}
			p := s.payment(d, i)
			notes := s.notifications(p)
			// Only payments whose changes are all past their grace period at the anchor.
			if at, _ := time.Parse(time.RFC3339Nano, notes[len(notes)-1].Created); at.Add(notificationGrace).Before(s.anchor) {
				flows = append(flows, &flow{p: p, notes: notes})
			}
		}
	}
	var truth []TruthBreak
	inject := func(rule string, step int, ok func([]notificationJSON) bool, edit func([]notificationJSON) []notificationJSON) {
		for gcd(step, len(flows)) > 1 { // a stride that visits every flow
			step++
		}
		for n, k := 0, 0; n < webhookInjections && k < len(flows); k++ {
			f := flows[(k*step)%len(flows)]
			if f.taken || !ok(f.notes) {
				continue
			}
			f.taken, f.notes = true, edit(f.notes)
			truth = append(truth, TruthBreak{RuleID: rule, PaymentID: f.p.id, Account: f.p.ours.addr()})
			n++
		}
	}
	// Dropped: the last notification of a payment that made several.
	inject("notification_missing_transition", 7, func(f []notificationJSON) bool { return len(f) >= 2 },
		func(f []notificationJSON) []notificationJSON { return f[:len(f)-1] })
	// Contradicting: after a COMPLETED payment's notifications, one saying FAILED.
	inject("notification_state_mismatch", 11, func(f []notificationJSON) bool { return f[len(f)-1].Payload.PaymentStatus == stateCompleted },
		func(f []notificationJSON) []notificationJSON {
			last := f[len(f)-1]
			at, _ := time.Parse(time.RFC3339Nano, last.Created)
			return append(f, s.notification(r, last.Payload, stateFailed, at.Add(5*time.Minute)))
		})
	var ids []string
	for _, f := range flows {
		for _, n := range f.notes {
			s.hooks.byID[n.UUID] = mustJSON(n)
			ids = append(ids, n.UUID)
		}
	}
	// Unknown to the server: delivered, answered 404 when fetched.
	for range webhookInjections {
		ids = append(ids, newUUID(r))
		truth = append(truth, TruthBreak{RuleID: "notification_unfetched"})
	}
	// Out of order, a fifth of them twice.
	for _, id := range slices.Clone(ids) {
		if r.IntN(5) == 0 {
			ids = append(ids, id)
		}
	}
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	s.hooks.deliveries = ids
	s.addTruth(truth)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// addTruth adds notification breaks to the truth, in its order.
func (s *Sandbox) addTruth(bs []TruthBreak) {
	s.truth.Breaks = append(s.truth.Breaks, bs...)
	slices.SortFunc(s.truth.Breaks, func(a, b TruthBreak) int {
		return cmp.Or(cmp.Compare(a.RuleID, b.RuleID), cmp.Compare(a.PaymentID, b.PaymentID), cmp.Compare(a.Account, b.Account))
	})
}

// notifications are the status changes of p as its server API record shows
// them: ACCEPTED, LOCKED, then EXECUTED or FAILED, then COMPLETED.
func (s *Sandbox) notifications(p *payment) []notificationJSON {
	a := s.apiPayment(p)
	r := s.rng(tagWebhook, uint64(p.day), uint64(p.idx)+1<<32)
	pay := notificationPay{SenderEndToEndID: p.e2e, PaymentID: p.id, ConnectorRole: a.InternalInfo.ConnectorRole,
		PaymentType: a.PaymentType}
	if p.method != "" {
		pay.PayoutMethod = &p.method
	}
	var out []notificationJSON
	step := func(state string, at string) {
		if t, err := time.Parse(time.RFC3339Nano, at); at != "" && err == nil {
			out = append(out, s.notification(r, pay, state, t))
			pay = out[len(out)-1].Payload
		}
	}
	step("ACCEPTED", string(a.AcceptedAt))
	step("LOCKED", string(a.LockedAt))
	if p.state == stateFailed {
		step(stateFailed, a.ModifiedAt)
		return out
	}
	step(stateExecuted, string(a.ExecutedAt))
	step(stateCompleted, string(a.CompletedAt))
	return out
}

// notification is the notification that the payment of prev (the payload
// of its previous notification, or a first one without a status) changed
// to state at at.
func (s *Sandbox) notification(r *rand.Rand, prev notificationPay, state string, at time.Time) notificationJSON {
	typ := "PAYMENT_STATUS_UPDATE"
	switch state {
	case stateCompleted:
		typ = "PAYMENT_SUCCESS"
	case stateFailed:
		typ = "PAYMENT_FAILURE"
	}
	pay := prev
	pay.PreviousPaymentStatus = nil
	if prev.PaymentStatus != "" {
		before := prev.PaymentStatus
		pay.PreviousPaymentStatus = &before
	}
	pay.PaymentStatus = state
	return notificationJSON{UUID: newUUID(r), Type: typ, Version: "1.0", Status: "NEW", Payload: pay, Created: ts(at), Updated: ts(at)}
}

// getNotification serves GET /v4/orchestration/payment/notification/{msg_id}.
func (s *Sandbox) getNotification(w http.ResponseWriter, r *http.Request) {
	n, ok := s.hooks.byID[r.PathValue("msg_id")]
	if !ok {
		serverError(w, http.StatusNotFound, "A0404", "Not Found", "no notification "+r.PathValue("msg_id"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(n, '\n'))
}

// Deliveries counts what Deliver did.
type Deliveries struct {
	Sent   int64 // deliveries answered 2xx
	Failed int64 // deliveries still refused after every retry
}

// Deliver POSTs every planned delivery to Config.WebhookURL, webhookWorkers
// at a time, each retried after webhookRetryDelay up to webhookRetries
// times on a non-2xx answer or no answer; it returns once all have settled
// (the deliveries settled: a test runs recon after it), or ctx ends.
func (s *Sandbox) Deliver(ctx context.Context) (Deliveries, error) {
	if s.cfg.WebhookURL == "" {
		return Deliveries{}, nil
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	var sent, failed atomic.Int64
	var mu sync.Mutex
	next := 0
	g, gctx := errgroup.WithContext(ctx)
	for range webhookWorkers {
		g.Go(func() error {
			for {
				mu.Lock()
				if next >= len(s.hooks.deliveries) {
					mu.Unlock()
					return nil
				}
				id := s.hooks.deliveries[next]
				next++
				mu.Unlock()
				ok, err := s.deliver(gctx, hc, id)
				if err != nil {
					return err
				}
				if ok {
					sent.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	err := g.Wait()
	return Deliveries{Sent: sent.Load(), Failed: failed.Load()}, err
}

// deliver makes one delivery, with its retries, and says whether it was
// accepted; only ctx's end is an error.
func (s *Sandbox) deliver(ctx context.Context, hc *http.Client, id string) (bool, error) {
	body := fmt.Appendf(nil, `{"msg_id":%q}`, id)
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.WebhookURL, bytes.NewReader(body))
		if err != nil {
			return false, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return true, nil
			}
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if try == webhookRetries {
			return false, nil
		}
		t := time.NewTimer(webhookRetryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}
