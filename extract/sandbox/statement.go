package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"recon/extract"
)

// entry is one ledger entry of a statement.
type entry struct {
	id, typ, state, e2e, internal, hash, sender, receiver string
	returns, returnedBy                                   string // returns_payment_with_id, returned_by_payment_with_id
	change, balance                                       decimal.Decimal
	jump                                                  decimal.Decimal // moves the balance beside change: an injected chain break
	at                                                    time.Time
}

// statement is an account's entries over a window, with balances chained from the opening.
type statement struct {
	opening, closing decimal.Decimal
	entries          []entry
}

// entries returns the entries of account a created in [from, to), ordered by
// created_at, transaction_id, without balances: one PAYMENT per payment that
// moved money on a (created_at = executed_at) and its transfers (transfers.go).
func (s *Sandbox) entries(a *account, from, to time.Time) []entry {
	var es []entry
	_ = s.each(from.Add(-maxLag), to, func(p *payment) error { // fn never fails
		if p.ours != a || !moved(p) || p.omit&omitStatement != 0 || !within(p.executed, from, to) {
			return nil
		}
		e := entry{id: p.id, typ: "PAYMENT", state: p.state, e2e: p.e2e, internal: p.internalID(),
			hash: p.hash, sender: p.sender.addr(), receiver: p.receiver.addr(), change: p.received, at: p.executed}
		if p.out {
			e.change = p.sent.Neg()
		}
		if p.ret != nil {
			e.returnedBy = p.ret.id
		}
		if p.edit != nil && p.edit.entry != nil {
			p.edit.entry(&e)
		}
		es = append(es, e)
		return nil
	})
	for d := max(unixDay(from), s.start); d < s.start+s.days && d*dayMS < to.UnixMilli(); d++ {
		for _, e := range s.transfers(a, d) {
			if within(e.at, from, to) {
				es = append(es, e)
			}
		}
	}
	es = append(es, s.reversals(a, from, to)...)
	if x, ok := s.lateTransfer(); ok && within(x.at, from, to) {
		if e, ok := x.entryOn(a); ok {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(x, y entry) int { return byTimeThenID(x.at, y.at, x.id, y.id) })
	return es
}

// opening is an account's balance before the first generated day.
func (s *Sandbox) opening() decimal.Decimal { return decimal.New(int64(s.n)*25_000, 0) }

// balanceAt is an account's balance at instant t: the opening plus every entry before t.
func (s *Sandbox) balanceAt(a *account, t time.Time) decimal.Decimal {
	b, day := s.opening(), unixDay(t)
	// Whole days first (memoised); entries stop the day after the last generated day.
	for d := s.start; d < day && d <= s.start+s.days; d++ {
		key := a.name + "/" + strconv.FormatInt(d, 10)
		s.api.mu.Lock()
		net, ok := s.api.nets[key]
		s.api.mu.Unlock()
		if !ok {
			for _, e := range s.entries(a, dayTime(d), dayTime(d+1)) {
				net = net.Add(e.change).Add(e.jump)
			}
			s.api.mu.Lock()
			s.api.nets[key] = net
			s.api.mu.Unlock()
		}
		b = b.Add(net)
	}
	for _, e := range s.entries(a, dayTime(day), t) {
		b = b.Add(e.change).Add(e.jump)
	}
	return b
}

// statement returns account a's statement over [from, to), cached for paging.
func (s *Sandbox) statement(a *account, from, to time.Time) *statement {
	key := a.name + "/" + ts(from) + "/" + ts(to)
	s.api.mu.Lock()
	st := s.api.stmts[key]
	s.api.mu.Unlock()
	if st != nil {
		return st
	}
	st = &statement{opening: s.balanceAt(a, from), entries: s.entries(a, from, to)}
	st.closing = st.opening
	for i := range st.entries {
		st.closing = st.closing.Add(st.entries[i].change).Add(st.entries[i].jump)
		st.entries[i].balance = st.closing
	}
	s.api.mu.Lock()
	if len(s.api.stmts) >= 16 {
		clear(s.api.stmts)
	}
	s.api.stmts[key] = st
	s.api.mu.Unlock()
	return st
}

// num is a JSON number written from decimal text; "" is null.
type num string

func (n num) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	return []byte(n), nil
}

// text is a JSON string; "" is null.
type text string

func (t text) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < ' ' || c > '~' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return json.Marshal(string(t)) // what needs escaping, escaped as encoding/json does
		}
	}
	return []byte(`"` + t + `"`), nil
}

type entryJSON struct {
	TransactionID           string `json:"transaction_id"`
	TransactionType         string `json:"transaction_type"`
	TransactionState        string `json:"transaction_state"`
	BalanceChange           num    `json:"balance_change"`
	BalanceResult           num    `json:"balance_result"`
	CreatedAt               string `json:"created_at"`
	EndToEndID              text   `json:"end_to_end_id"`
	InternalID              text   `json:"internal_id"`
	VenueID                 text   `json:"venue_id"`
	TransactionHash         text   `json:"transaction_hash"`
	ReturnsPaymentWithID    text   `json:"returns_payment_with_id"`
	ReturnedByPaymentWithID text   `json:"returned_by_payment_with_id"`
	SenderAddress           string `json:"sender_address"`
	ReceiverAddress         string `json:"receiver_address"`
}

type statementJSON struct {
	AccountName    string `json:"account_name"`
	Currency       string `json:"currency"`
	OpeningBalance num    `json:"opening_balance"`
	ClosingBalance num    `json:"closing_balance"`
	StartDatetime  string `json:"start_datetime"`
	EndDatetime    string `json:"end_datetime"`
	GeneratedAt    string `json:"generated_at"`
	Transactions   struct {
		Content       []entryJSON `json:"content"`
		First         bool        `json:"first"`
		Last          bool        `json:"last"`
		Number        int         `json:"number"`
		Size          int         `json:"size"`
		TotalPages    int         `json:"totalPages"`
		TotalElements int         `json:"total_elements"`
	} `json:"transactions"`
}

// getStatement serves GET /v4/statement/{account}: start-date inclusive,
// end-date exclusive, page zero-based (default 0), size 1..100 (default 10).
func (s *Sandbox) getStatement(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("account")
	i := slices.IndexFunc(ours, func(a *account) bool { return a.addr() == name })
	if i < 0 {
		serverError(w, http.StatusNotFound, "E0101", "Not Found", "no account "+name+" on this node")
		return
	}
	a, q := ours[i], r.URL.Query()
	bad := func(detail string) { serverError(w, http.StatusBadRequest, "E0120", "invalid_request", detail) }
	from, err1 := time.Parse(extract.TimeFormat, q.Get("start-date"))
	to, err2 := time.Parse(extract.TimeFormat, q.Get("end-date"))
	page, err3 := intParam(q.Get("page"), 0)
	size, err4 := intParam(q.Get("size"), 10)
	switch {
	case err1 != nil || err2 != nil:
		bad("start-date and end-date are required, as YYYY-MM-DDTHH:mm:ss.sssZ")
		return
	case !to.After(from):
		bad("end-date must be after start-date")
		return
	case err3 != nil || page < 0:
		bad("page must be a non-negative integer")
		return
	case err4 != nil || size < 1 || size > extract.MaxStatementPage:
		bad(fmt.Sprintf("size must be 1..%d", extract.MaxStatementPage))
		return
	}
	st := s.statement(a, from, to)
	var out statementJSON
	out.AccountName, out.Currency = a.addr(), a.currency
	out.OpeningBalance, out.ClosingBalance = num(fiat(st.opening)), num(fiat(st.closing))
	out.StartDatetime, out.EndDatetime, out.GeneratedAt = ts(from), ts(to), ts(to) // generated_at: deterministic
	total := len(st.entries)
	pages := (total + size - 1) / size
	lo := total
	if page < pages {
		lo = page * size
	}
	tx := &out.Transactions
	tx.Content = []entryJSON{}
	for _, e := range st.entries[lo:min(lo+size, total)] {
		tx.Content = append(tx.Content, entryJSON{
			TransactionID: e.id, TransactionType: e.typ, TransactionState: e.state,
			BalanceChange: num(fiat(e.change)), BalanceResult: num(fiat(e.balance)), CreatedAt: ts(e.at),
			EndToEndID: text(e.e2e), InternalID: text(e.internal), TransactionHash: text(e.hash),
			SenderAddress: e.sender, ReceiverAddress: e.receiver,
			ReturnsPaymentWithID: text(e.returns), ReturnedByPaymentWithID: text(e.returnedBy),
		})
	}
	tx.First, tx.Last, tx.Number, tx.Size = page == 0, page >= pages-1, page, size
	tx.TotalPages, tx.TotalElements = pages, total
	writeJSON(w, http.StatusOK, out)
}

func intParam(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}
