package sandbox

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"recon/extract"
)

// This node.
const (
	nodeAddress = "rn.us.ny.acme"
	customer    = "Acme Bank"
	treasury    = "acme_treasury@" + nodeAddress // funds our accounts; not in Accounts()
)

// account is one ledger account on the network.
type account struct {
	name, node, customer string
	currency, country    string
	code                 string // prefix of the end-to-end ids its node chooses
	weight               int    // share of its side's payments, in percent
}

func (a *account) addr() string { return a.name + "@" + a.node }

var ours = []*account{
	{"acme_usd", nodeAddress, customer, "USD", "US", "ACME", 50},
	{"acme_eur", nodeAddress, customer, "EUR", "US", "ACME", 30},
	{"acme_gbp", nodeAddress, customer, "GBP", "US", "ACME", 20},
}

var partners = []*account{
	{"solpagos_mxn", "rn.mx.cdmx.solpagos", "Sol Pagos", "MXN", "MX", "SOLP", 30},
	{"isla_php", "rn.ph.mnl.isla", "Isla Remit", "PHP", "PH", "ISLA", 25},
	{"indus_inr", "rn.in.mum.indus", "Indus Bank", "INR", "IN", "INDU", 20},
	{"rhein_eur", "rn.de.fra.rhein", "Rhein Bank", "EUR", "DE", "RHEI", 15},
	{"bay_usd", "rn.us.sf.bay", "Bay Credit Union", "USD", "US", "BAYC", 10},
}

// currencies: units per US dollar, and the exchange that trades the currency against XRP.
var currencies = map[string]struct {
	perUSD   decimal.Decimal
	exchange string
}{
	"USD": {decimal.RequireFromString("1"), "northwind_us"},
	"EUR": {decimal.RequireFromString("0.92"), "northwind_eu"},
	"GBP": {decimal.RequireFromString("0.79"), "northwind_uk"},
	"MXN": {decimal.RequireFromString("17.10"), "solx_mx"},
	"PHP": {decimal.RequireFromString("56.20"), "islax_ph"},
	"INR": {decimal.RequireFromString("83.30"), "indusx_in"},
}

var (
	xrpUSD      = decimal.RequireFromString("0.52")     // US dollars per XRP
	xrpNetFee   = decimal.RequireFromString("0.000012") // ledger fee of a crypto transfer
	tradeFee    = decimal.RequireFromString("0.001")    // exchange fee on each trade
	odlSpread   = decimal.RequireFromString("0.996")    // received / (sent × spot)
	firstNames  = []string{"Ana", "Ben", "Chloe", "Diego", "Elena", "Farah", "Gita", "Hugo", "Ines", "Jamal", "Kenji", "Lucia", "Maya", "Nikhil", "Olga", "Pedro"}
	lastNames   = []string{"Alvarez", "Brown", "Cruz", "Dubois", "Evans", "Fischer", "Garcia", "Huang", "Iyer", "Jensen", "Kumar", "Lopez", "Mendoza", "Novak", "Okafor", "Patel", "Reyes", "Santos"}
	payoutTypes = []string{"REAL_TIME_GROSS_SETTLEMENT_SYSTEM", "REAL_TIME_NET_SETTLEMENT_SYSTEM", "BOOK_TRANSFER", "CASH_PAYOUT", "WALLET_PAYMENT", "OTHER"}
)

// Payment and transaction states.
const (
	stateCompleted = "COMPLETED"
	stateExecuted  = "EXECUTED"
	stateFailed    = "FAILED"
	stateComplete  = "COMPLETE" // how exchanges report a finished trade
)

const (
	dayMS  = 86_400_000
	maxLag = 21 * time.Minute // quote_ts to executed_at (or the failure) is at most this
)

// payment is one generated payment: a pure function of (seed, day, index).
type payment struct {
	day                                 int64 // days since the Unix epoch
	idx                                 int
	id, e2e, state                      string
	quote, created, executed, failed    time.Time // executed is zero for FAILED; failed only for FAILED
	out                                 bool      // sent by one of our accounts
	ours, sender, receiver              *account
	sent, received                      decimal.Decimal
	odl                                 bool // cross-currency through XRP
	spot, srcAdj, xrp, incentive        decimal.Decimal
	withdrawal, deposit                 decimal.Decimal
	hash                                string // XRP ledger transaction of the crypto transfer
	method, remitter, remitterAcct      string
	beneficiary, beneficiaryAcct, batch string
	omit                                uint8  // rows left out by injected breaks
	edit                                *edits // rows changed by injected breaks
	ret                                 *ret   // the payment's return, when RETURNED (returns.go)
}

// payment returns payment idx of a day, generated once when the memo holds it.
func (s *Sandbox) payment(day int64, idx int) *payment {
	slot := s.memo.slot(day-s.start, idx, s.n)
	if slot != nil {
		if p := slot.Load(); p != nil {
			return p
		}
	}
	p := s.generate(day, idx)
	if slot != nil {
		slot.Store(p)
	}
	return p
}

// memoPayments is the most generated days' payments the memo keeps: about
// 1.2 KB each, so at most about 2.4 GB. A sandbox generating more (days ×
// payments per day) generates a payment each time it is read.
const memoPayments = 2_000_000

// memo keeps the generated payments once the breaks are placed (a payment
// depends on them). Every list, report, statement and liquidation reads the
// same payments; generating one costs about 10 µs, mostly decimals and fmt.
type memo []atomic.Pointer[payment] // by day offset × payments per day + index

func newMemo(days int64, n int) memo {
	if days*int64(n) > memoPayments {
		return nil
	}
	return make(memo, days*int64(n))
}

// slot is where payment idx of the day at offset d is kept, or nil.
func (m memo) slot(d int64, idx, n int) *atomic.Pointer[payment] {
	i := d*int64(n) + int64(idx)
	if d < 0 || idx < 0 || idx >= n || i >= int64(len(m)) {
		return nil
	}
	return &m[i]
}

// generate makes payment idx of a day: a pure function of the seed, the day,
// the index and the injected breaks.
func (s *Sandbox) generate(day int64, idx int) *payment {
	r := s.rng(tagPayment, uint64(day), uint64(idx))
	p := &payment{day: day, idx: idx, out: r.IntN(100) < 60, ours: pick(r, ours)}
	other := pick(r, partners)
	p.sender, p.receiver = p.ours, other
	if !p.out {
		p.sender, p.receiver = other, p.ours
	}
	p.odl = p.sender.currency != p.receiver.currency
	switch x := r.IntN(100); {
	case p.odl && x < 5:
		p.state = stateFailed
	case x < 15:
		p.state = stateExecuted
	default:
		p.state = stateCompleted
	}
	p.id = newUUID(r)
	dayStart := dayTime(day)
	p.e2e = fmt.Sprintf("%s%s%07d", p.sender.code, dayStart.Format("20060102"), idx)

	// Quote times sit in one slot per index, so quote_ts grows with idx; the
	// day's last payment is quoted in its final minute and usually executes
	// after midnight.
	n := int64(s.n)
	lo, hi := int64(idx)*dayMS/n, int64(idx+1)*dayMS/n
	off := lo + r.Int64N(hi-lo)
	if int64(idx) == n-1 && hi-lo > 60_000 {
		off = hi - 1 - r.Int64N(60_000)
	}
	p.quote = dayStart.Add(time.Duration(off) * time.Millisecond)
	p.created = p.quote.Add(time.Duration(1000+r.Int64N(29_000)) * time.Millisecond)
	done := p.created.Add(time.Duration(5000+r.Int64N(1+r.Int64N(1_195_000))) * time.Millisecond)
	if p.state == stateFailed {
		p.failed = done
	} else {
		p.executed = done
	}

	// Amount: a US dollar value in one of three magnitudes, in the sender's currency.
	base := int64(10_000)
	if x := r.IntN(100); x >= 85 {
		base = 1_000_000
	} else if x >= 50 {
		base = 100_000
	}
	sentCur, recvCur := currencies[p.sender.currency], currencies[p.receiver.currency]
	p.sent = decimal.New(base+r.Int64N(9*base), -2).Mul(sentCur.perUSD).Round(2)
	p.received = p.sent
	if p.odl {
		p.spot = recvCur.perUSD.Div(sentCur.perUSD).Mul(jitter(r, 500)).Round(6)
		p.received = p.sent.Mul(p.spot).Mul(odlSpread).Round(2)
		p.srcAdj = p.sent.Sub(p.sent.Mul(tradeFee).Round(2))
		p.xrp = p.srcAdj.Div(sentCur.perUSD).DivRound(xrpUSD.Mul(jitter(r, 1000)), 6)
		p.incentive = decimal.New(r.Int64N(100_001)-50_000, -6)
		p.withdrawal = p.xrp.Add(p.incentive)
		p.deposit = p.withdrawal.Sub(xrpNetFee)
		p.hash = fmt.Sprintf("%016X%016X%016X%016X", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
	}

	// Personal data (fake): remitter at the sender's side, beneficiary at the receiver's.
	p.remitter, p.remitterAcct = person(r), accountNo(r, p.sender.country)
	p.beneficiary, p.beneficiaryAcct = person(r), accountNo(r, p.receiver.country)
	if p.out {
		p.method = payoutTypes[r.IntN(len(payoutTypes))]
		if r.IntN(10) == 0 {
			p.batch = fmt.Sprintf("batch-%s-%04d", dayStart.Format("20060102"), idx/100)
		}
	}
	if in := s.breaks[dayKey(day, idx)]; in != nil {
		in.apply(s, p)
	}
	return p
}

// internalID is the id our node gives the payment.
func (p *payment) internalID() string {
	return fmt.Sprintf("acme-%d-%07d", p.day, p.idx)
}

// each calls fn, in quote_ts order, for the generated payments quoted in [from, to).
func (s *Sandbox) each(from, to time.Time, fn func(*payment) error) error {
	a, b, n := from.UnixMilli(), to.UnixMilli(), int64(s.n)
	for d := max(floorDiv(a, dayMS), s.start); d < s.start+s.days && d*dayMS < b; d++ {
		// Slot bounds give the candidate indices; the quote time decides.
		lo := max(a-d*dayMS, 0)*n/dayMS - 1
		hi := min(b-d*dayMS, dayMS)*n/dayMS + 1
		for i := max(lo, 0); i < min(hi, n); i++ {
			p := s.payment(d, int(i))
			if q := p.quote.UnixMilli(); q < a || q >= b {
				continue
			}
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func pick(r *rand.Rand, as []*account) *account {
	x := r.IntN(100)
	for _, a := range as {
		if x < a.weight {
			return a
		}
		x -= a.weight
	}
	return as[len(as)-1]
}

// jitter returns 1 ± up to bp/100000, drawn from r.
func jitter(r *rand.Rand, bp int64) decimal.Decimal {
	return decimal.New(100_000+r.Int64N(2*bp+1)-bp, -5)
}

func person(r *rand.Rand) string {
	return firstNames[r.IntN(len(firstNames))] + " " + lastNames[r.IntN(len(lastNames))]
}

func accountNo(r *rand.Rand, country string) string {
	return fmt.Sprintf("%s%02d%014d", country, r.IntN(100), r.Int64N(100_000_000_000_000))
}

func newUUID(r *rand.Rand) string { return uuidOf(r.Uint64(), r.Uint64()) }

// uuidOf is the version 4 UUID of 128 random bits.
func uuidOf(hi, lo uint64) string {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

func dayKey(day int64, idx int) uint64 { return uint64(day)<<32 | uint64(idx) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func unixDay(t time.Time) int64 { return floorDiv(t.UnixMilli(), dayMS) }

func dayTime(day int64) time.Time { return time.UnixMilli(day * dayMS).UTC() }

// ts formats t in the provider's timestamp format; the zero time is null ("").
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 1000 || y > 9999 {
		return t.Format(extract.TimeFormat)
	}
	h, mi, sec := t.Clock()
	// extract.TimeFormat written by hand: the sandbox formats millions of times.
	b := []byte("0000-00-00T00:00:00.000Z")
	for _, f := range [...]struct{ at, width, v int }{{0, 4, y}, {5, 2, int(mo)}, {8, 2, d}, {11, 2, h},
		{14, 2, mi}, {17, 2, sec}, {20, 3, t.Nanosecond() / 1e6}} {
		for i, v := f.at+f.width-1, f.v; i >= f.at; i, v = i-1, v/10 {
			b[i] = byte('0' + v%10)
		}
	}
	return string(b)
}

func within(t, from, to time.Time) bool { return !t.IsZero() && !t.Before(from) && t.Before(to) }

func fiat(d decimal.Decimal) string { return fixed(d, 2) }

func xrp(d decimal.Decimal) string { return fixed(d, 6) }

// fixed is d.StringFixed(places), 0 ≤ places ≤ 17, written without
// big.Int's formatting when d needs no rounding and its coefficient at that
// scale fits an int64: the amounts of a payment do, and formatting them
// through big.Int was a seventh of the sandbox's CPU.
func fixed(d decimal.Decimal, places int32) string {
	e := d.Exponent()
	if e > 0 || e < -places || d.NumDigits()+int(places+e) > 18 {
		return d.StringFixed(places)
	}
	c, p := d.CoefficientInt64()*pow10[places+e], pow10[places]
	var buf [24]byte // 18 digits, a sign and a point: one allocation, the string
	b := buf[:0]
	if c < 0 {
		b, c = append(b, '-'), -c
	}
	b = strconv.AppendInt(b, c/p, 10)
	if places > 0 {
		b = append(b, '.')
		for f, q := c%p, p/10; q > 0; q /= 10 {
			b, f = append(b, byte('0'+f/q)), f%q
		}
	}
	return string(b)
}

// byTimeThenID orders by instant, then by id. The id is compared only on a
// tie: cmp.Or compares both every time, and comparing the ids of entries at
// different instants was most of the time spent sorting a 1M day's statement.
func byTimeThenID(at1, at2 time.Time, id1, id2 string) int {
	if c := at1.Compare(at2); c != 0 {
		return c
	}
	return strings.Compare(id1, id2)
}

var pow10 = func() (p [18]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
