package sandbox

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract/raw"
)

// column is one report column; numbers are written bare in JSON, and
// currency codes lower case in JSON (the provider does so at times).
type column struct {
	name             string
	number, currency bool
}

// layout is the column list of one report type.
type layout struct {
	cols []column
	idx  map[string]int
}

// newLayout parses a column list; a trailing # marks a number.
func newLayout(spec string) *layout {
	l := &layout{idx: map[string]int{}}
	for i, f := range strings.Fields(spec) {
		name, num := strings.CutSuffix(f, "#")
		l.cols = append(l.cols, column{name: name, number: num, currency: strings.HasSuffix(name, "_currency")})
		l.idx[name] = i
	}
	return l
}

var layouts = map[string]*layout{
	raw.ReportPaymentOps: newLayout(`end_to_end_id network_payment_id quote_ts created_at executed_at
		sender_address sender_customer sent_amount# sent_currency withdrawal_result_amount#
		receiver_address receiver_customer received_amount# received_currency fx_spot_rate#
		source_exchange destination_exchange payment_method payment_state
		remitter_name remitter_account beneficiary_name beneficiary_account payment_batch_id`),
	raw.ReportRecon: newLayout(`end_to_end_id network_payment_id payment_state internal_payment_state quote_ts
		executed_at sender_address sender_customer sent_amount# sent_currency receiver_address
		receiver_customer received_amount# received_currency fx_spot_rate# source_exchange
		destination_exchange payment_method transaction_id transaction_type transaction_state venue_id
		source_result_amount# source_result_adjusted_amount# source_result_proceeds#
		source_result_adjusted_proceeds# withdrawal_result_id withdrawal_result_details_transaction_id
		withdrawal_result_amount# withdrawal_result_fee_amount# withdrawal_result_incentive_value#
		deposit_result_id deposit_result_amount# deposit_result_fee_amount# balance_change_currency
		balance_change# balance_result# destination_result_id destination_result_amount#
		destination_result_adjusted_amount# destination_result_incentive_value#
		destination_result_proceeds# destination_result_adjusted_proceeds# liquidation_status
		liquidation_trade_request_status payment_batch_id`),
	raw.ReportFailureConversion: newLayout(`end_to_end_id network_payment_id execution_result_type
		execution_timestamp fiat_adjusted_value# fx_rate# intermediary_delta# payment_state
		sent_amount# sent_currency received_amount# received_currency transfer_currency venue_id
		ssa_account sender_customer ssa_remote_transfer_id ssa_transfer_amount# ssa_balance_change#
		ssa_balance_result# ssa_transfer_currency ssa_transfer_state`),
}

// row is one report row; "" is null.
type row struct {
	l    *layout
	v    []string
	text int // 1 + the index of a number column JSON writes as a string (a malformed row), or 0
}

func (l *layout) row() row { return row{l: l, v: make([]string, len(l.cols))} }

// put sets a column; columns the layout lacks are ignored, so shared
// payment-level fields can be put into every layout.
func (r row) put(name, v string) {
	if i, ok := r.l.idx[name]; ok {
		r.v[i] = v
	}
}

// putPayment sets the payment-level fields, as the provider shows them to us.
func (p *payment) putPayment(r row) {
	r.put("end_to_end_id", p.e2e)
	r.put("network_payment_id", p.id)
	r.put("payment_state", p.reportState())
	r.put("internal_payment_state", p.reportState())
	r.put("quote_ts", ts(p.quote))
	r.put("created_at", ts(p.created))
	r.put("executed_at", ts(p.executed))
	r.put("sender_address", p.sender.addr())
	r.put("sender_customer", p.sender.customer)
	r.put("sent_amount", fiat(p.sent))
	r.put("sent_currency", p.sender.currency)
	r.put("receiver_address", p.receiver.addr())
	r.put("receiver_customer", p.receiver.customer)
	r.put("received_amount", fiat(p.received))
	r.put("received_currency", p.receiver.currency)
	r.put("remitter_name", p.remitter)
	r.put("remitter_account", p.remitterAcct)
	r.put("beneficiary_name", p.beneficiary)
	r.put("beneficiary_account", p.beneficiaryAcct)
	r.put("payment_batch_id", p.batch)
	if p.out { // "sender only" fields
		r.put("payment_method", p.method)
		if p.odl {
			r.put("fx_spot_rate", fixed(p.spot, 6))
			r.put("source_exchange", currencies[p.sender.currency].exchange)
		}
	} else if p.odl { // "receiver only"
		r.put("destination_exchange", currencies[p.receiver.currency].exchange)
	}
}

func (p *payment) opsRow() row {
	r := layouts[raw.ReportPaymentOps].row()
	p.putPayment(r)
	if p.out && p.odl {
		r.put("withdrawal_result_amount", xrp(p.withdrawal))
	}
	return r
}

// reconRows returns one row per transaction of the payment: an on-demand
// liquidity payment has a fiat transfer in, a trade to XRP, a crypto
// transfer, a trade to the receiving currency and (mostly) a fiat payout;
// a same-currency payment has two fiat transfers.
func (s *Sandbox) reconRows(p *payment) []row {
	x := s.rng(tagRecon, uint64(p.day), uint64(p.idx))
	l := layouts[raw.ReportRecon]
	var rows []row
	leg := func(typ, state string) row {
		r := l.row()
		p.putPayment(r)
		r.put("transaction_id", newUUID(x))
		r.put("transaction_type", typ)
		r.put("transaction_state", state)
		rows = append(rows, r)
		return r
	}
	in := leg("FIAT_TRANSFER", stateCompleted)
	in.put("balance_change_currency", p.sender.currency)
	in.put("balance_change", fiat(p.sent.Neg()))
	if !p.odl {
		out := leg("FIAT_TRANSFER", stateCompleted)
		out.put("balance_change_currency", p.receiver.currency)
		out.put("balance_change", fiat(p.received))
	} else {
		src, dst := currencies[p.sender.currency].exchange, currencies[p.receiver.currency].exchange
		in.put("deposit_result_id", newUUID(x))
		in.put("deposit_result_amount", fiat(p.sent))
		in.put("deposit_result_fee_amount", "0.00")

		buy := leg("TRADE", stateComplete)
		buy.put("venue_id", venue(x, src))
		buy.put("source_result_amount", fiat(p.sent))
		buy.put("source_result_adjusted_amount", fiat(p.srcAdj))
		buy.put("source_result_proceeds", xrp(p.xrp))
		buy.put("source_result_adjusted_proceeds", xrp(p.xrp))

		move := leg("CRYPTO_TRANSFER", stateCompleted)
		move.put("venue_id", venue(x, src))
		move.put("withdrawal_result_id", newUUID(x))
		move.put("withdrawal_result_details_transaction_id", p.hash)
		move.put("withdrawal_result_amount", xrp(p.withdrawal))
		move.put("withdrawal_result_fee_amount", xrp(xrpNetFee))
		move.put("withdrawal_result_incentive_value", xrp(p.incentive))
		move.put("deposit_result_id", newUUID(x))
		move.put("deposit_result_amount", xrp(p.deposit))
		move.put("deposit_result_fee_amount", xrp(decimal.Zero))

		sell := leg("TRADE", stateComplete)
		sell.put("venue_id", venue(x, dst))
		sell.put("destination_result_id", newUUID(x))
		switch p.state {
		case stateFailed:
			sell.put("transaction_state", stateFailed)
			sell.put("liquidation_status", "FAILED")
			sell.put("liquidation_trade_request_status", "FAILED")
		default:
			sell.put("destination_result_amount", xrp(p.deposit))
			sell.put("destination_result_adjusted_amount", xrp(p.deposit))
			sell.put("destination_result_incentive_value", xrp(decimal.Zero))
			sell.put("destination_result_proceeds", fiat(p.received.Add(p.received.Mul(tradeFee).Round(2))))
			sell.put("destination_result_adjusted_proceeds", fiat(p.received))
			sell.put("liquidation_status", stateCompleted)
			sell.put("liquidation_trade_request_status", stateExecuted)
			if x.IntN(10) < 7 {
				payout := leg("FIAT_TRANSFER", stateCompleted)
				payout.put("balance_change_currency", p.receiver.currency)
				payout.put("balance_change", fiat(p.received))
			}
		}
	}
	if p.state == stateExecuted { // the payout is not confirmed yet
		rows[len(rows)-1].put("transaction_state", stateExecuted)
	}
	if p.edit != nil && p.edit.recon != nil {
		p.edit.recon(rows)
	}
	return rows
}

// failureRow is the FAILURE_CONVERSION_SSA row of a failed payment: the XRP
// that reached the destination exchange, converted into the receiving
// currency and credited to the sender's settlement account there.
func (s *Sandbox) failureRow(p *payment) row {
	x := s.rng(tagFailure, uint64(p.day), uint64(p.idx))
	cur := currencies[p.receiver.currency]
	rate := cur.perUSD.Mul(xrpUSD).Mul(jitter(x, 1000)).Round(6)
	amount := p.deposit.Mul(rate).Round(2)
	r := layouts[raw.ReportFailureConversion].row()
	p.putPayment(r)
	r.put("execution_result_type", "EXCHANGE_TRADE")
	r.put("execution_timestamp", ts(p.failed))
	r.put("fiat_adjusted_value", fiat(decimal.New(x.Int64N(201)-100, -2)))
	r.put("fx_rate", fixed(rate, 6))
	r.put("intermediary_delta", xrp(decimal.New(x.Int64N(20_001)-10_000, -6)))
	r.put("transfer_currency", "XRP")
	r.put("venue_id", venue(x, cur.exchange))
	r.put("ssa_account", p.ssaAccount())
	r.put("ssa_remote_transfer_id", newUUID(x))
	r.put("ssa_transfer_amount", fiat(amount))
	r.put("ssa_balance_change", fiat(amount))
	r.put("ssa_transfer_currency", p.receiver.currency)
	r.put("ssa_transfer_state", stateCompleted) // funds recovered, unless a break is injected
	if p.edit != nil && p.edit.failure != nil {
		p.edit.failure(r)
	}
	return r
}

func venue(r *rand.Rand, exchange string) string {
	return fmt.Sprintf("%s-%010d", exchange, r.Int64N(10_000_000_000))
}

// eachRow calls fn for the rows of a report over [from, to), in order.
func (s *Sandbox) eachRow(typ string, from, to time.Time, fn func(row) error) error {
	switch typ {
	case raw.ReportPaymentOps:
		return s.each(from, to, func(p *payment) error {
			if p.omit&omitOps != 0 {
				return nil
			}
			return fn(p.opsRow())
		})
	case raw.ReportRecon:
		return s.each(from, to, func(p *payment) error {
			if p.omit&omitRecon != 0 {
				return nil
			}
			for _, r := range s.reconRows(p) {
				if err := fn(r); err != nil {
					return err
				}
			}
			return nil
		})
	case raw.ReportFailureConversion:
		return s.each(from.Add(-maxLag), to, func(p *payment) error {
			if p.state != stateFailed || p.omit&omitFailure != 0 || !within(p.failed, from, to) {
				return nil
			}
			return fn(s.failureRow(p))
		})
	}
	return fmt.Errorf("unknown report type %q", typ)
}

var errFound = errors.New("found")

// hasRows reports whether a report over [from, to) has any row.
func (s *Sandbox) hasRows(typ string, from, to time.Time) bool {
	return s.eachRow(typ, from, to, func(row) error { return errFound }) == errFound
}

// WriteReport writes the report of a type and format over the window's days,
// the same bytes the download serves (malformed rows included), and returns
// its number of rows without the malformed ones.
func (s *Sandbox) WriteReport(w io.Writer, reportType, format string, win raw.Window) (rows int, err error) {
	rows, _, err = s.writeReport(w, reportType, format, win.Start(), win.End())
	return rows, err
}

// writeReport streams the rows of [from, to): CSV with a header row, or a
// JSON array of objects. It returns the rows and the malformed rows it added.
func (s *Sandbox) writeReport(w io.Writer, typ, format string, from, to time.Time) (rows, junk int, err error) {
	l, ok := layouts[typ]
	if !ok {
		return 0, 0, fmt.Errorf("unknown report type %q", typ)
	}
	var emit func(row) error
	var end func() error
	switch format {
	case raw.FormatCSV:
		cw := csv.NewWriter(w)
		head := make([]string, len(l.cols))
		for i, c := range l.cols {
			head[i] = c.name
		}
		if err := cw.Write(head); err != nil {
			return 0, 0, err
		}
		emit = func(r row) error { return cw.Write(r.v) }
		end = func() error { cw.Flush(); return cw.Error() }
	case raw.FormatJSON:
		bw := bufio.NewWriter(w)
		var buf []byte
		sep := "[\n"
		emit = func(r row) error {
			buf = append(append(buf[:0], sep...), '{')
			for i, c := range r.l.cols {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendString(buf, c.name)
				buf = append(buf, ':')
				switch v := r.v[i]; {
				case v == "":
					buf = append(buf, "null"...)
				case c.number && r.text != i+1:
					buf = append(buf, v...)
				case c.currency:
					buf = appendString(buf, strings.ToLower(v))
				default:
					buf = appendString(buf, v)
				}
			}
			sep = ",\n"
			_, err := bw.Write(append(buf, '}'))
			return err
		}
		end = func() error {
			tail := "\n]\n"
			if sep == "[\n" {
				tail = "[]\n"
			}
			if _, err := bw.WriteString(tail); err != nil {
				return err
			}
			return bw.Flush()
		}
	default:
		return 0, 0, fmt.Errorf("unknown report format %q", format)
	}
	err = s.eachRow(typ, from, to, func(r row) error {
		rows++
		if err := emit(r); err != nil {
			return err
		}
		if bad, ok := s.malformed(r, format); ok {
			junk++
			return emit(bad)
		}
		return nil
	})
	if err != nil {
		return rows, junk, err
	}
	return rows, junk, end()
}

// malformed returns, for a share Faults.MalformedRows of rows (drawn from
// the row's content, so a row is malformed in every report that holds it),
// a copy of r with one defect a loader must quarantine: an amount in a
// European format, a timestamp in a local format, or (CSV) a row cut short
// and (JSON) an amount written as an object. Every defect leaves the payment
// id readable, so the truth's row_quarantined breaks name it whatever the
// format. The row itself is always written unchanged.
func (s *Sandbox) malformed(r row, format string) (row, bool) {
	if s.cfg.Faults.MalformedRows == 0 {
		return row{}, false
	}
	x := s.rng(tagMalformed, hash(strings.Join(r.v, "\x1f")), 0)
	if x.Float64() >= s.cfg.Faults.MalformedRows {
		return row{}, false
	}
	bad := row{l: r.l, v: slices.Clone(r.v)}
	switch x.IntN(3) {
	case 0:
		bad.put("sent_amount", "1.234,56")
		bad.text = r.l.idx["sent_amount"] + 1
	case 1:
		for _, c := range []string{"quote_ts", "execution_timestamp"} {
			bad.put(c, "31/12/2026 25:61")
		}
	default:
		if format == raw.FormatCSV {
			bad.v = bad.v[:len(bad.v)-3]
		} else {
			bad.put("sent_amount", `{"value":"1.00"}`) // a number column: written as is
		}
	}
	return bad, true
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
