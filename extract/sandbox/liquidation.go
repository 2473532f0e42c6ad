package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"recon/extract"
)

// Liquidation statuses (extract/provider.go) and trade execution statuses.
const (
	liqCreated   = "CREATED"
	liqCompleted = "COMPLETED"
	execExecuted = "EXECUTED"
)

// maxPerTrade is the execution strategy's largest trade request, in XRP.
var maxPerTrade = decimal.New(25_000, 0)

// liquidation is one record of the liquidation service. Amounts are
// decimal text written as JSON numbers.
type liquidation struct {
	ID                      string         `json:"id"`
	AccountID               string         `json:"account_id"`
	CreatedAt               string         `json:"created_at"`
	ModifiedAt              string         `json:"modified_at"`
	UniqueReferenceID       string         `json:"unique_reference_id"`
	NetworkPaymentID        string         `json:"network_payment_id"`
	NetworkPaymentCreatedAt string         `json:"network_payment_created_at"`
	NetworkSenderAddress    string         `json:"network_sender_address"`
	NetworkReceiverAddress  string         `json:"network_receiver_address"`
	DestinationAmount       num            `json:"destination_amount"`
	DestinationCurrency     string         `json:"destination_currency"`
	DestinationVenue        string         `json:"destination_venue"`
	EstimateType            string         `json:"estimate_type"`
	ExpiresAt               string         `json:"expires_at"`
	LiquidationSource       string         `json:"liquidation_source"`
	Status                  string         `json:"status"`
	TradeRequests           []tradeRequest `json:"trade_requests,omitempty"` // in the list too, unless Faults.LiquidationSummaries
	ExecutionStrategy       struct {
		MaxAmountPerTrade    num `json:"maxAmountPerTrade"`
		MinimumTradeInterval num `json:"minimumTradeInterval"`
	} `json:"execution_strategy"`
	ExecutionSummary struct {
		TotalXRP          num    `json:"total_xrp"`
		TotalFiat         num    `json:"total_fiat"`
		TotalSlippage     num    `json:"total_slippage"`
		TotalSenderFees   num    `json:"total_sender_fees"`
		TotalReceiverFees num    `json:"total_receiver_fees"`
		TotalTrades       int    `json:"total_trades"`
		FxRate            num    `json:"fx_rate"`
		IncentiveType     string `json:"incentive_type"`
	} `json:"execution_summary"`
	TradingSummary struct {
		TotalFiatExecuted             num `json:"total_fiat_executed"`
		TotalFiatInFlight             num `json:"total_fiat_in_flight"`
		TotalFiatNonDeliverable       num `json:"total_fiat_non_deliverable"`
		TotalFiatRemainingDeliverable num `json:"total_fiat_remaining_deliverable"`
	} `json:"trading_summary"`

	created time.Time // CreatedAt, for selection and order
	key     uint64    // dayKey of its payment
	omit    bool      // set by an injected break: the liquidation does not exist
}

type tradeRequest struct {
	ID                        string           `json:"id"`
	CreatedAt                 string           `json:"created_at"`
	ModifiedAt                string           `json:"modified_at"`
	Status                    string           `json:"status"`
	Amount                    num              `json:"amount"` // available for withdrawal after fees
	DestinationCurrency       string           `json:"destination_currency"`
	TradeExchange             string           `json:"trade_exchange"`
	ExpiresAt                 string           `json:"expires_at"`
	FiatAvailableAfterFailure bool             `json:"fiat_available_after_failure"`
	TradeExecutions           []tradeExecution `json:"trade_executions"`
}

type tradeExecution struct {
	ID                  string `json:"id"`
	ExecutedAt          string `json:"executed_at"`
	Status              string `json:"status"`
	SourceAmount        num    `json:"source_amount"`
	SourceCurrency      string `json:"source_currency"`
	DestinationAmount   num    `json:"destination_amount"` // fiat before the fee
	DestinationCurrency string `json:"destination_currency"`
	Rate                num    `json:"rate"`
	Fee                 num    `json:"fee"`
}

// liquidates reports whether a payment has a liquidation: it was received
// by this node through a destination exchange and moved money (COMPLETED,
// or EXECUTED with the payout not yet confirmed), and the network knows it.
func liquidates(p *payment) bool { return !p.out && p.odl && moved(p) && !unknown(p) }

// unknown reports whether an injected break hid the payment from every
// report (statement_entry_without_payment): the server API and the
// liquidation service do not know it either.
func unknown(p *payment) bool { return p.omit&(omitOps|omitRecon) == omitOps|omitRecon }

// liquidation returns the liquidation of a payment, or nil. The XRP that
// reached the destination exchange (the RECON deposit) is sold in trade
// requests of at most maxPerTrade XRP, each in one or two executions; the
// gross fiat and the fee are the RECON destination trade's proceeds and
// their difference, so destination_amount, total_fiat and
// total_fiat_executed equal the RECON destination_result_adjusted_proceeds.
func (s *Sandbox) liquidation(p *payment) *liquidation {
	if !liquidates(p) {
		return nil
	}
	r := s.rng(tagLiquidation, uint64(p.day), uint64(p.idx))
	id, created := s.liquidationHead(p, r)
	cur, exchange := p.receiver.currency, currencies[p.receiver.currency].exchange
	l := &liquidation{
		ID: id, AccountID: strings.ToLower(p.receiver.code) + "@" + exchange,
		UniqueReferenceID: p.internalID(), NetworkPaymentID: p.id, NetworkPaymentCreatedAt: ts(p.created),
		NetworkSenderAddress: p.sender.addr(), NetworkReceiverAddress: p.receiver.addr(),
		DestinationAmount: num(fiat(p.received)), DestinationCurrency: cur, DestinationVenue: exchange,
		EstimateType: "firm", LiquidationSource: "ODL_PAYMENT", Status: liqCompleted, key: dayKey(p.day, p.idx),
	}
	l.created = created
	l.CreatedAt, l.ExpiresAt = ts(l.created), ts(l.created.Add(time.Hour))
	l.ExecutionStrategy.MaxAmountPerTrade, l.ExecutionStrategy.MinimumTradeInterval = num(maxPerTrade.String()), "1"

	// Split the XRP into trade requests and executions.
	total := p.deposit
	gross := p.received.Add(p.received.Mul(tradeFee).Round(2))
	fee := gross.Sub(p.received)
	var sizes [][]decimal.Decimal // XRP per execution, per trade request
	trades := int(total.Div(maxPerTrade).Ceil().IntPart())
	for i, left := 0, total; i < trades; i++ {
		part := left
		if i < trades-1 {
			part = total.DivRound(decimal.New(int64(trades), 0), 6)
		}
		left = left.Sub(part)
		if r.IntN(2) == 0 || part.LessThan(decimal.New(2, -6)) {
			sizes = append(sizes, []decimal.Decimal{part})
			continue
		}
		first := part.Mul(decimal.New(int64(30+r.IntN(41)), -2)).Round(6)
		sizes = append(sizes, []decimal.Decimal{first, part.Sub(first)})
	}
	execs := 0
	for _, tr := range sizes {
		execs += len(tr)
	}
	gap := p.executed.Sub(l.created) / time.Duration(execs+1) // every execution before the payment executes
	var soldXRP, soldGross, soldFee decimal.Decimal
	k := 0
	for _, tr := range sizes {
		at := l.created.Add(gap * time.Duration(k+1))
		req := tradeRequest{ID: newUUID(r), CreatedAt: ts(at.Add(-500 * time.Millisecond)), Status: liqCompleted,
			DestinationCurrency: cur, TradeExchange: exchange, ExpiresAt: ts(at.Add(15 * time.Minute))}
		var net decimal.Decimal
		for _, x := range tr {
			k++
			g, f := gross.Sub(soldGross), fee.Sub(soldFee) // the last execution takes the rest
			if k < execs {
				g = gross.Mul(x).DivRound(total, 2)
				f = fee.Mul(x).DivRound(total, 2)
			}
			soldXRP, soldGross, soldFee = soldXRP.Add(x), soldGross.Add(g), soldFee.Add(f)
			at = l.created.Add(gap * time.Duration(k))
			req.TradeExecutions = append(req.TradeExecutions, tradeExecution{
				ID: newUUID(r), ExecutedAt: ts(at), Status: execExecuted, SourceAmount: num(xrp(x)), SourceCurrency: "XRP",
				DestinationAmount: num(fiat(g)), DestinationCurrency: cur, Rate: num(g.DivRound(x, 8).String()), Fee: num(fiat(f)),
			})
			net = net.Add(g.Sub(f))
		}
		req.Amount, req.ModifiedAt = num(fiat(net)), ts(at)
		l.TradeRequests = append(l.TradeRequests, req)
	}
	l.ModifiedAt = l.TradeRequests[len(l.TradeRequests)-1].ModifiedAt
	es := &l.ExecutionSummary
	es.TotalXRP, es.TotalFiat, es.TotalSlippage = num(xrp(soldXRP)), num(fiat(soldGross.Sub(soldFee))), "0"
	es.TotalSenderFees, es.TotalReceiverFees, es.TotalTrades = "0", num(fiat(soldFee)), execs
	es.FxRate, es.IncentiveType = num(p.received.DivRound(total, 8).String()), "firm"
	tsum := &l.TradingSummary
	tsum.TotalFiatExecuted, tsum.TotalFiatInFlight = es.TotalFiat, "0"
	tsum.TotalFiatNonDeliverable, tsum.TotalFiatRemainingDeliverable = "0", "0"
	if p.edit != nil && p.edit.liquidation != nil {
		p.edit.liquidation(l)
	}
	if l.omit {
		return nil
	}
	return l
}

// liquidationID makes a random-looking uuid whose last 7 bytes encode the
// payment's day (24 bits) and index (32 bits), masked by a key drawn from
// the seed and the first 8 bytes, so GET /liquidations/{id} finds the
// payment without an index.
func (s *Sandbox) liquidationID(p *payment, random uint64) string {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], random)
	u[6] = u[6]&0x0f | 0x40 // version 4
	binary.BigEndian.PutUint64(u[8:], (uint64(p.day)<<32|uint64(uint32(p.idx)))^s.idMask(u))
	u[8] = 0x80 // RFC 4122 variant, in the byte the encoding leaves free
	return u.String()
}

// idMask masks the day and index in a liquidation id.
func (s *Sandbox) idMask(u uuid.UUID) uint64 {
	return mix(mix(uint64(s.cfg.Seed), tagLiquidation), binary.BigEndian.Uint64(u[:8])) & (1<<56 - 1)
}

// liquidationByID returns the liquidation an id names, or nil.
func (s *Sandbox) liquidationByID(id string) *liquidation {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil
	}
	v := binary.BigEndian.Uint64(u[8:])&(1<<56-1) ^ s.idMask(u)
	day, idx := int64(v>>32), int(uint32(v))
	if day < s.start || day >= s.start+s.days || idx >= s.n {
		return nil
	}
	if l := s.liquidation(s.payment(day, idx)); l != nil && l.ID == id {
		return l
	}
	return nil
}

// liquidationHead draws a liquidation's id and creation time, the first
// draws of its stream r (created 1-4 s after its payment).
func (s *Sandbox) liquidationHead(p *payment, r *rand.Rand) (string, time.Time) {
	id := s.liquidationID(p, r.Uint64())
	return id, p.created.Add(time.Duration(1000+r.Int64N(3000)) * time.Millisecond)
}

// liquidations returns the liquidations created in [from, to), ordered by
// created_at and id, as far as a list needs them: without their trades,
// except those an injected break edits, which are made whole.
func (s *Sandbox) liquidations(from, to time.Time) []*liquidation {
	var out []*liquidation
	_ = s.each(from.Add(-maxLag), to, func(p *payment) error { // fn never fails
		l := &liquidation{Status: liqCompleted, NetworkPaymentID: p.id, UniqueReferenceID: p.internalID(), key: dayKey(p.day, p.idx)}
		switch {
		case !liquidates(p):
			return nil
		case p.edit != nil && p.edit.liquidation != nil:
			if l = s.liquidation(p); l == nil {
				return nil
			}
		default:
			l.ID, l.created = s.liquidationHead(p, s.rng(tagLiquidation, uint64(p.day), uint64(p.idx)))
		}
		if within(l.created, from, to) {
			out = append(out, l)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b *liquidation) int { return byTimeThenID(a.created, b.created, a.ID, b.ID) })
	return out
}

// listed is the list form of a liquidation: the whole record, or with
// Faults.LiquidationSummaries a summary without trade requests. A
// liquidation without trade requests (CREATED) never carries the field.
func (l *liquidation) listed(summary bool) json.RawMessage {
	c := *l
	if summary {
		c.TradeRequests = nil
	}
	return mustJSON(c)
}

func (s *Sandbox) liquidationError(w http.ResponseWriter, status int, title, detail string) {
	writeJSON(w, status, map[string]any{
		"type":  "urn:recon-sandbox:liquidation:" + strings.ReplaceAll(strings.ToLower(title), " ", "-"),
		"title": title, "status": status, "detail": detail,
		"correlationId": fmt.Sprintf("%016x", mix(uint64(s.now().UnixNano()), uint64(status))), "timestamp": ts(s.now()),
	})
}

func (s *Sandbox) liquidationDenied(w http.ResponseWriter, detail string) {
	s.liquidationError(w, http.StatusUnauthorized, "Unauthorized", detail)
}

// listLiquidations serves GET /liquidations: start_date (inclusive) and
// end_date (exclusive) select by created_at (either may be absent); status,
// payment_id and reference_id filter; page zero-based, size 1..200 (default
// 50); the envelope's items are in results, whole records unless
// Faults.LiquidationSummaries.
func (s *Sandbox) listLiquidations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size, bad := pageParams(q, 50, extract.MaxLiquidationPage)
	from, to := dayTime(s.start), dayTime(s.start+s.days+1)
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"start_date", &from}, {"end_date", &to}} {
		if v := q.Get(p.name); v != "" {
			t, err := parseTime(v)
			if err != nil {
				bad = p.name + " must be an ISO 8601 date-time"
			}
			*p.t = t
		}
	}
	if bad != "" {
		s.liquidationError(w, http.StatusBadRequest, "Bad Request", bad)
		return
	}
	key := "liquidations " + ts(from) + " " + ts(to) + " " + q.Get("status") + " " + q.Get("payment_id") + " " + q.Get("reference_id")
	keys := s.cached(key, func() []uint64 {
		var out []uint64
		for _, l := range s.liquidations(from, to) {
			if f := q.Get("status"); f != "" && f != l.Status ||
				q.Get("payment_id") != "" && q.Get("payment_id") != l.NetworkPaymentID ||
				q.Get("reference_id") != "" && q.Get("reference_id") != l.UniqueReferenceID {
				continue
			}
			out = append(out, l.key)
		}
		return out
	})
	writePage(w, "results", len(keys), page, size, []sortJSON{ascending("created_at")},
		func(i int) json.RawMessage {
			return s.liquidation(s.byDayKey(keys[i])).listed(s.cfg.Faults.LiquidationSummaries)
		})
}

// getLiquidation serves GET /liquidations/{id}: the whole record.
func (s *Sandbox) getLiquidation(w http.ResponseWriter, r *http.Request) {
	l := s.liquidationByID(r.PathValue("id"))
	if l == nil {
		s.liquidationError(w, http.StatusNotFound, "Not Found", "no liquidation "+r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// paymentLiquidations serves GET /liquidations/network-payment-id/{id}: an
// array (empty for a payment without one; 404 for an unknown payment).
func (s *Sandbox) paymentLiquidations(w http.ResponseWriter, r *http.Request) {
	p := s.paymentByID(r.PathValue("id"))
	if p == nil {
		s.liquidationError(w, http.StatusNotFound, "Not Found", "no payment "+r.PathValue("id"))
		return
	}
	out := []*liquidation{}
	if l := s.liquidation(p); l != nil {
		out = append(out, l)
	}
	writeJSON(w, http.StatusOK, out)
}

// liquidationState is the liquidation service's: an index of the payments, built on first use.
type liquidationState struct {
	mu        sync.Mutex
	byPayment map[string]uint64 // payment id -> dayKey
}

// paymentByID finds a generated payment by id, through an index of every
// generated payment built on first use.
func (s *Sandbox) paymentByID(id string) *payment {
	s.liq.mu.Lock()
	if s.liq.byPayment == nil {
		s.liq.mu.Unlock()
		idx := map[string]uint64{}
		for d := s.start; d < s.start+s.days; d++ {
			for i := range s.n {
				idx[s.payment(d, i).id] = dayKey(d, i)
			}
		}
		s.liq.mu.Lock()
		s.liq.byPayment = idx
	}
	k, ok := s.liq.byPayment[id]
	s.liq.mu.Unlock()
	if !ok {
		return nil
	}
	return s.payment(int64(k>>32), int(uint32(k)))
}
