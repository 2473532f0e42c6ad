package sandbox

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"recon/extract"
)

// sortJSON is one item of a page envelope's sort array.
type sortJSON struct {
	Direction    string `json:"direction"`
	Property     string `json:"property"`
	IgnoreCase   bool   `json:"ignoreCase"`
	NullHandling string `json:"nullHandling"`
	Ascending    bool   `json:"ascending"`
	Descending   bool   `json:"descending"`
}

func ascending(property string) sortJSON {
	return sortJSON{Direction: "ASC", Property: property, NullHandling: "NATIVE", Ascending: true}
}

func descending(property string) sortJSON {
	return sortJSON{Direction: "DESC", Property: property, NullHandling: "NATIVE", Descending: true}
}

// pageParams reads page (zero-based, default 0) and size (1..maxSize,
// default def); bad is the problem, or "".
func pageParams(q url.Values, def, maxSize int) (page, size int, bad string) {
	page, err1 := intParam(q.Get("page"), 0)
	size, err2 := intParam(q.Get("size"), def)
	switch {
	case err1 != nil || page < 0 || page > 1<<20:
		return 0, 0, "page must be a non-negative integer"
	case err2 != nil || size < 1 || size > maxSize:
		return 0, 0, fmt.Sprintf("size must be 1..%d", maxSize)
	}
	return page, size, ""
}

// writePage writes one page of a list of total items in the spec's page
// envelope, the items under field (content, or results for liquidations);
// item renders the i-th item, so only the page's items are ever rendered. A
// page past the end is empty and last.
func writePage(w http.ResponseWriter, field string, total, page, size int, sort []sortJSON, item func(i int) json.RawMessage) {
	pages := (total + size - 1) / size
	lo := min(page*size, total)
	hi := min(lo+size, total)
	rest := mustJSON(map[string]any{
		"first": page == 0, "last": page >= pages-1, "number": page, "numberOfElements": hi - lo, "size": size,
		"totalElements": total, "totalPages": pages, "sort": sort,
	})
	// The body is allocated once, at its size: grown as the items came, the
	// pages of a 1M day allocated 22 GB (docs/performance.md).
	items := make([]json.RawMessage, hi-lo)
	n := len(rest) + len(field) + 8
	for i := range items {
		items[i] = item(lo + i)
		n += len(items[i]) + 1
	}
	body := make([]byte, 0, n)
	body = append(append(append(body, `{"`...), field...), `":[`...)
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	body = append(append(append(body, "],"...), rest[1:]...), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // the client may have gone; nothing to do
}

// serverState is the server API's: small caches of computed lists and
// statements, and of each account's net change per day.
type serverState struct {
	mu     sync.Mutex
	lists  map[string][]uint64 // as payment day keys
	making singleflight.Group  // lists being computed
	stmts  map[string]*statement
	nets   map[string]decimal.Decimal // net change of an account on a day
	fees   []feeJSON                  // the fee configuration (fees.go), made once
}

// cached returns the list of key, computing it with fill once while a small
// cache holds it (paging asks for the same list again). A list holds the
// day keys (dayKey) of its payments in list order, never their JSON, so a
// list of millions is a few megabytes.
// Requests for a list being made wait for it rather than make it again.
func (s *Sandbox) cached(key string, fill func() []uint64) []uint64 {
	s.api.mu.Lock()
	items, ok := s.api.lists[key]
	s.api.mu.Unlock()
	if ok {
		return items
	}
	v, _, _ := s.api.making.Do(key, func() (any, error) {
		items := fill()
		s.api.mu.Lock()
		if len(s.api.lists) >= 16 {
			clear(s.api.lists)
		}
		s.api.lists[key] = items
		s.api.mu.Unlock()
		return items, nil
	})
	return v.([]uint64)
}

// byDayKey returns the payment of a day key.
func (s *Sandbox) byDayKey(k uint64) *payment { return s.payment(int64(k>>32), int(uint32(k))) }

// mustJSON encodes with goccy/go-json: the same bytes as encoding/json
// (HTML-safe, fields in order, map keys sorted) for a fraction of its CPU,
// which a sandbox serving millions of records would otherwise spend.
func mustJSON(v any) json.RawMessage {
	b, err := gojson.Marshal(v)
	if err != nil {
		panic(err) // plain data always marshals
	}
	return b
}

// apiPayment is a payment as the server API's GET /payments shows it to
// this node. It agrees with the reports: the same id, end-to-end id,
// state, executed_at, addresses, amounts and currencies. A payment no
// report knows (an injected break) is not served.
type apiPayment struct {
	PaymentID               string          `json:"payment_id"`
	ContractHash            string          `json:"contract_hash"`
	PaymentState            string          `json:"payment_state"`
	ModifiedAt              string          `json:"modified_at"`
	Contract                apiContract     `json:"contract"`
	NetworkInfo             []apiNodeInfo   `json:"network_info"`
	ExecutionCondition      string          `json:"execution_condition"`
	CryptoTransactionID     string          `json:"crypto_transaction_id"`
	Validator               string          `json:"validator"`
	PaymentType             string          `json:"payment_type"`
	ReturnsPaymentWithID    text            `json:"returns_payment_with_id"`
	ReturnedByPaymentWithID text            `json:"returned_by_payment_with_id"`
	ExecutionResults        []apiResult     `json:"execution_results"`
	AcceptedAt              text            `json:"accepted_at"`
	LockedAt                text            `json:"locked_at"`
	ExecutedAt              text            `json:"executed_at"`
	CompletedAt             text            `json:"completed_at"`
	ReturnedAt              text            `json:"returned_at"`
	InternalInfo            apiInternalInfo `json:"internal_info"`
	UserInfo                []apiUserInfo   `json:"user_info"`

	created, executed, modified time.Time // for range_field selection
}

type apiContract struct {
	SenderEndToEndID string   `json:"sender_end_to_end_id"`
	CreatedAt        string   `json:"created_at"`
	ExpiresAt        string   `json:"expires_at"`
	Quote            apiQuote `json:"quote"`
	FeeInfo          struct {
		Nodes     map[string][]any `json:"nodes"`
		TotalFees []apiTotalFee    `json:"total_fees"`
	} `json:"fee_info"`
}

type apiTotalFee struct {
	TotalFee    num    `json:"total_fee"`
	FeeCurrency string `json:"fee_currency"`
}

type apiQuote struct {
	QuoteID            string       `json:"quote_id"`
	CreatedAt          string       `json:"created_at"`
	ExpiresAt          string       `json:"expires_at"`
	Type               string       `json:"type"`
	PriceGuarantee     string       `json:"price_guarantee"`
	SenderAddress      string       `json:"sender_address"`
	ReceiverAddress    string       `json:"receiver_address"`
	Amount             string       `json:"amount"`
	CurrencyCode       string       `json:"currency_code"`
	CurrencyCodeFilter text         `json:"currency_code_filter"`
	ServiceType        text         `json:"service_type"`
	QuoteElements      []apiElement `json:"quote_elements"`
	LiquidityWarning   text         `json:"liquidity_warning"`
	PaymentMethod      text         `json:"payment_method"`
}

// apiElement is a quote element; execution results repeat its amounts.
type apiElement struct {
	QuoteElementID        string `json:"quote_element_id"`
	QuoteElementType      string `json:"quote_element_type"`
	QuoteElementOrder     string `json:"quote_element_order"`
	SenderAddress         string `json:"sender_address"`
	ReceiverAddress       string `json:"receiver_address"`
	SendingAmount         num    `json:"sending_amount"`
	ReceivingAmount       num    `json:"receiving_amount"`
	SendingFee            num    `json:"sending_fee"`
	ReceivingFee          num    `json:"receiving_fee"`
	SendingCurrencyCode   text   `json:"sending_currency_code"`
	ReceivingCurrencyCode text   `json:"receiving_currency_code"`
	TransferCurrencyCode  text   `json:"transfer_currency_code"`
}

type apiResult struct {
	ExecutionResultID    string `json:"execution_result_id"`
	ExecutionTimestamp   string `json:"execution_timestamp"`
	ExecutionResultType  string `json:"execution_result_type"`
	ExecutionResultOrder int    `json:"execution_result_order"`
	SenderAddress        string `json:"sender_address"`
	ReceiverAddress      string `json:"receiver_address"`
	SendingAmount        num    `json:"sending_amount"`
	ReceivingAmount      num    `json:"receiving_amount"`
	SendingFee           num    `json:"sending_fee"`
	ReceivingFee         num    `json:"receiving_fee"`
	TransferCurrencyCode text   `json:"transfer_currency_code"`
	TransactionHash      text   `json:"transaction_hash"`
}

type apiNodeInfo struct {
	NodeAddress        string `json:"node_address"`
	SettlementDeclined []any  `json:"settlement_declined"`
}

type apiInternalInfo struct {
	ConnectorRole string     `json:"connector_role"`
	Labels        []apiLabel `json:"labels"`
	InternalID    text       `json:"internal_id"`
}

type apiLabel struct {
	Label string `json:"label"`
}

type apiUserInfo struct {
	NodeAddress string `json:"node_address"`
	Accepted    []any  `json:"accepted"`
	Locked      []any  `json:"locked"`
	Executed    []any  `json:"executed"`
	Completed   []any  `json:"completed"`
}

// Label of a payment whose payout was amended and then delivered.
const labelAmend = "AMEND"

// apiPayment returns the server API record of a payment: accepted 1s and
// locked 2s after its creation, executed when the reports say, COMPLETED
// 1 to 30 minutes later; 4 % of completed outgoing payments carry the AMEND label.
func (s *Sandbox) apiPayment(p *payment) *apiPayment {
	d := s.apiDraws(p)
	r := d.r
	a := &apiPayment{
		PaymentID: p.id, ContractHash: fmt.Sprintf("%016x%016x%016x%016x", d.hash[0], d.hash[1], d.hash[2], d.hash[3]),
		PaymentState: p.state, PaymentType: "REGULAR", Validator: nodeAddress,
		CryptoTransactionID: uuidOf(d.cryptoID[0], d.cryptoID[1]),
		ExecutionCondition:  base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%016x%016x", d.condition[0], d.condition[1])),
		AcceptedAt:          text(ts(p.created.Add(time.Second))), LockedAt: text(ts(p.created.Add(2 * time.Second))),
		ExecutedAt: text(ts(p.executed)), created: p.created, executed: p.executed, modified: d.modified,
		NetworkInfo: []apiNodeInfo{{p.sender.node, []any{}}, {p.receiver.node, []any{}}},
		UserInfo:    []apiUserInfo{{NodeAddress: nodeAddress, Accepted: []any{}, Locked: []any{}, Executed: []any{}, Completed: []any{}}},
	}
	if p.state == stateCompleted {
		a.CompletedAt = text(ts(a.modified))
	}
	a.ModifiedAt = ts(a.modified)
	a.InternalInfo = apiInternalInfo{ConnectorRole: "RECEIVING", Labels: []apiLabel{}, InternalID: text(p.internalID())}
	if p.out {
		a.InternalInfo.ConnectorRole = "SENDING"
		if p.state == stateCompleted && r.IntN(100) < 4 {
			a.InternalInfo.Labels = append(a.InternalInfo.Labels, apiLabel{labelAmend})
		}
	}
	c := &a.Contract
	c.SenderEndToEndID, c.CreatedAt, c.ExpiresAt = p.e2e, ts(p.created), ts(p.created.Add(300*time.Second))
	c.FeeInfo.Nodes, c.FeeInfo.TotalFees = map[string][]any{}, []apiTotalFee{}
	q := &c.Quote
	q.QuoteID, q.CreatedAt, q.ExpiresAt = newUUID(r), ts(p.quote), ts(p.quote.Add(300*time.Second))
	q.Type, q.PriceGuarantee = "SENDER_AMOUNT", "FIRM"
	q.SenderAddress, q.ReceiverAddress = p.sender.addr(), p.receiver.addr()
	q.Amount, q.CurrencyCode, q.CurrencyCodeFilter = fiat(p.sent), p.sender.currency, text(p.receiver.currency)
	q.PaymentMethod = text(p.method)
	q.QuoteElements = make([]apiElement, 0, 5) // at most five (ODL): grown one by one, these two lists were 8% of what the sandbox allocated at 1M

	// The liquidity path, as the RECON transactions show it.
	elem := func(typ, from, to string, send, recv decimal.Decimal, sendCur, recvCur string, amounts func(decimal.Decimal) string) {
		e := apiElement{QuoteElementID: newUUID(r), QuoteElementType: typ, QuoteElementOrder: strconv.Itoa(len(q.QuoteElements) + 1),
			SenderAddress: from, ReceiverAddress: to, SendingAmount: num(amounts(send)), ReceivingAmount: num(amounts(recv)),
			SendingFee: "0", ReceivingFee: "0"}
		if typ == "TRANSFER" || typ == "CRYPTO_TRANSFER" {
			e.TransferCurrencyCode = text(sendCur)
		} else {
			e.SendingCurrencyCode, e.ReceivingCurrencyCode = text(sendCur), text(recvCur)
		}
		q.QuoteElements = append(q.QuoteElements, e)
	}
	src, dst := currencies[p.sender.currency].exchange, currencies[p.receiver.currency].exchange
	if !p.odl {
		elem("TRANSFER", p.sender.addr(), p.receiver.addr(), p.sent, p.received, p.sender.currency, "", fiat)
	} else {
		srcAcct, dstAcct := "odl_"+strings.ToLower(p.sender.currency)+"@"+src, "odl_"+strings.ToLower(p.receiver.currency)+"@"+dst
		elem("TRANSFER", p.sender.addr(), srcAcct, p.sent, p.sent, p.sender.currency, "", fiat)
		elem("EXCHANGE_TRADE", srcAcct, "odl_xrp@"+src, p.srcAdj, p.xrp, p.sender.currency, "XRP", func(d decimal.Decimal) string { return d.String() })
		elem("CRYPTO_TRANSFER", "odl_xrp@"+src, "odl_xrp@"+dst, p.withdrawal, p.deposit, "XRP", "", xrp)
		if p.state != stateFailed {
			elem("EXCHANGE_TRADE", "odl_xrp@"+dst, dstAcct, p.deposit, p.received, "XRP", p.receiver.currency, func(d decimal.Decimal) string { return d.String() })
			elem("TRANSFER", dstAcct, p.receiver.addr(), p.received, p.received, p.receiver.currency, "", fiat)
		}
	}
	a.ExecutionResults = []apiResult{}
	if !p.executed.IsZero() {
		a.ExecutionResults = make([]apiResult, 0, len(q.QuoteElements))
		for i, e := range q.QuoteElements {
			res := apiResult{ExecutionResultID: newUUID(r), ExecutionTimestamp: ts(p.executed), ExecutionResultType: e.QuoteElementType,
				ExecutionResultOrder: i + 1, SenderAddress: e.SenderAddress, ReceiverAddress: e.ReceiverAddress,
				SendingAmount: e.SendingAmount, ReceivingAmount: e.ReceivingAmount, SendingFee: "0", ReceivingFee: "0",
				TransferCurrencyCode: e.TransferCurrencyCode}
			if e.QuoteElementType == "CRYPTO_TRANSFER" {
				res.TransactionHash = text(p.hash)
			}
			a.ExecutionResults = append(a.ExecutionResults, res)
		}
	}
	if p.ret != nil {
		a.setState(stateReturned, p.returnedAt())
		a.ReturnedByPaymentWithID = text(p.ret.id)
	}
	s.chargeFees(a, p)
	if p.edit != nil && p.edit.api != nil {
		p.edit.api(a)
	}
	return a
}

// apiDraws are the first values drawn for a payment's API record, in the
// order drawn; r goes on to the rest of the record.
type apiDraws struct {
	r                   *rand.Rand
	hash                [4]uint64 // contract hash
	cryptoID, condition [2]uint64 // crypto transaction id, execution condition
	modified            time.Time // a completed payment's completion is drawn
}

func (s *Sandbox) apiDraws(p *payment) apiDraws {
	d := apiDraws{r: s.rng(tagAPIPayment, uint64(p.day), uint64(p.idx))}
	for _, u := range [][]uint64{d.hash[:], d.cryptoID[:], d.condition[:]} {
		for i := range u {
			u[i] = d.r.Uint64()
		}
	}
	d.modified = p.executed
	switch p.state {
	case stateCompleted:
		d.modified = p.executed.Add(time.Duration(60+d.r.Int64N(1740)) * time.Second)
	case stateFailed:
		d.modified = p.failed
	}
	return d
}

// Range fields of GET /payments, how long after the quote each can be, and
// the same time read off the payment itself where it equals the record's of
// a payment without edits (so a list of millions is sorted without making
// their records).
var rangeFields = map[string]struct {
	at  func(*apiPayment) time.Time
	of  func(*Sandbox, *payment) time.Time
	lag time.Duration
}{
	"CREATED_AT":  {func(a *apiPayment) time.Time { return a.created }, func(_ *Sandbox, p *payment) time.Time { return p.created }, time.Minute},
	"EXECUTED_AT": {func(a *apiPayment) time.Time { return a.executed }, func(_ *Sandbox, p *payment) time.Time { return p.executed }, maxLag},
	"MODIFIED_AT": {func(a *apiPayment) time.Time { return a.modified }, func(s *Sandbox, p *payment) time.Time { return s.apiDraws(p).modified }, maxLag + 30*time.Minute},
}

// listPayments serves GET /v4/payments: range_field with after and/or
// before (exclusive, 24-character form; either requires range_field and
// range_field requires one), with_labels (every label given), page
// zero-based and size 1..100 (default 10); items in ascending range field
// (created_at without one), then payment_id.
func (s *Sandbox) listPayments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size, bad := pageParams(q, 10, extract.MaxServerPage)
	field := q.Get("range_field")
	after, before := dayTime(s.start), dayTime(s.start+s.days+1)
	rf, known := rangeFields[field]
	switch {
	case bad != "":
	case field != "" && !known:
		bad = "range_field must be CREATED_AT, EXECUTED_AT or MODIFIED_AT"
	case (field == "") != (q.Get("after") == "" && q.Get("before") == ""):
		bad = "before or after requires range_field, and range_field requires before or after"
	}
	for _, p := range []struct {
		name string
		t    *time.Time
		off  time.Duration
	}{{"after", &after, time.Millisecond}, {"before", &before, 0}} {
		if v := q.Get(p.name); v != "" && bad == "" {
			t, err := time.Parse(extract.TimeFormat, v)
			if err != nil || len(v) != len(extract.TimeFormat) {
				bad = p.name + " must be YYYY-MM-DDTHH:mm:ss.sssZ"
			}
			*p.t = t.Add(p.off) // the inclusive start of what after excludes
		}
	}
	if bad != "" {
		serverError(w, http.StatusBadRequest, "E0120", "invalid_request", bad)
		return
	}
	ranged := field != ""
	if !ranged {
		field, rf = "CREATED_AT", rangeFields["CREATED_AT"]
	}
	labels := q["with_labels"]
	// Only AMEND is a label without an injected edit: a list of other labels
	// looks at the edited payments alone, so a sweep of millions stays cheap.
	editedOnly := len(labels) > 0 && !slices.Contains(labels, labelAmend)
	key := "payments " + field + " " + ts(after) + " " + ts(before) + " " + strings.Join(labels, ",")
	keys := s.cached(key, func() []uint64 {
		type listed struct {
			key uint64
			at  time.Time
			id  string
		}
		var ps []listed
		_ = s.each(after.Add(-rf.lag), before, func(p *payment) error { // fn never fails
			if unknown(p) || p.ret != nil { // returned payments: listReturns
				return nil
			}
			if editedOnly && (p.edit == nil || p.edit.api == nil) {
				return nil
			}
			if len(labels) == 0 && (p.edit == nil || p.edit.api == nil) {
				if at := rf.of(s, p); within(at, after, before) {
					ps = append(ps, listed{dayKey(p.day, p.idx), at, p.id})
				}
				return nil
			}
			a := s.apiPayment(p)
			if !within(rf.at(a), after, before) || !hasLabels(a, labels) {
				return nil
			}
			ps = append(ps, listed{dayKey(p.day, p.idx), rf.at(a), a.PaymentID})
			return nil
		})
		for _, r := range s.listReturns(field, after, before, labels) {
			ps = append(ps, listed{r.key, r.at, r.id})
		}
		for _, k := range s.history { // older than the generated days: found by label alone
			if a := s.apiPayment(s.byDayKey(k)); !ranged && len(labels) > 0 && hasLabels(a, labels) {
				ps = append(ps, listed{k, rf.at(a), a.PaymentID})
			}
		}
		slices.SortFunc(ps, func(x, y listed) int { return byTimeThenID(x.at, y.at, x.id, y.id) })
		out := make([]uint64, len(ps))
		for i, p := range ps {
			out[i] = p.key
		}
		return out
	})
	writePage(w, "content", len(keys), page, size, []sortJSON{ascending(strings.ToLower(field))},
		func(i int) json.RawMessage { return mustJSON(s.record(keys[i])) })
}

// hasLabels reports whether a carries every one of labels.
func hasLabels(a *apiPayment, labels []string) bool {
	for _, l := range labels {
		if !slices.Contains(a.InternalInfo.Labels, apiLabel{l}) {
			return false
		}
	}
	return true
}

// transferJSON is an item of GET /transfers.
type transferJSON struct {
	TransferID      string `json:"transfer_id"`
	State           string `json:"state"`
	OwnerAddress    string `json:"owner_address"`
	SenderAddress   string `json:"sender_address"`
	ReceiverAddress string `json:"receiver_address"`
	Amount          string `json:"amount"`
	InternalID      text   `json:"internal_id"`
	EndToEndID      text   `json:"end_to_end_id"`
	SendingFee      num    `json:"sending_fee"`
	CreatedAt       string `json:"created_at"`
	UserInfo        []any  `json:"user_info"`
	Labels          []any  `json:"labels"`
}

// listTransfers serves GET /v4/transfers: this node's transfers
// (transfers.go) created before the sandbox's now; sort_field CREATED_AT (the only one),
// sort_direction DESC (default) or ASC, then transfer_id; page zero-based,
// size 1..100 (default 5).
func (s *Sandbox) listTransfers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, size, bad := pageParams(q, 5, extract.MaxServerPage)
	dir := cmp.Or(q.Get("sort_direction"), "DESC")
	switch {
	case bad != "":
	case q.Get("sort_field") != "" && q.Get("sort_field") != "CREATED_AT":
		bad = "sort_field must be CREATED_AT"
	case dir != "ASC" && dir != "DESC":
		bad = "sort_direction must be ASC or DESC"
	}
	if bad != "" {
		serverError(w, http.StatusBadRequest, "E0120", "invalid_request", bad)
		return
	}
	all := s.listedTransfers(s.now())
	at := make([]time.Time, len(all))
	for i, t := range all {
		at[i], _ = time.Parse(extract.TimeFormat, t.CreatedAt)
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		c := byTimeThenID(at[i], at[j], all[i].TransferID, all[j].TransferID)
		if dir == "DESC" {
			return -c
		}
		return c
	})
	sort := ascending("created_at")
	if dir == "DESC" {
		sort = descending("created_at")
	}
	writePage(w, "content", len(order), page, size, []sortJSON{sort}, func(i int) json.RawMessage { return mustJSON(all[order[i]]) })
}

// getBalances serves GET /v4/monitor/balances: each account's balance at
// the sandbox's now, which is the closing balance of a statement ending then
// (but for the injected drift, balances.go).
func (s *Sandbox) getBalances(w http.ResponseWriter, _ *http.Request) {
	type accountBalance struct {
		AccountName           string `json:"account_name"`
		Balance               num    `json:"balance"`
		Currency              string `json:"currency"`
		Owner                 string `json:"owner"`
		MinimumAllowedBalance num    `json:"minimum_allowed_balance"`
	}
	type currencyBalance struct {
		Currency         string           `json:"currency"`
		AggregateBalance num              `json:"aggregate_balance"`
		AccountBalances  []accountBalance `json:"account_balances"`
	}
	now := s.now()
	var cbs []currencyBalance
	for _, a := range ours {
		b := s.balanceAt(a, now).Add(s.balanceDrift(a))
		cbs = append(cbs, currencyBalance{Currency: a.currency, AggregateBalance: num(fiat(b)),
			AccountBalances: []accountBalance{{AccountName: a.addr(), Balance: num(fiat(b)), Currency: a.currency,
				Owner: nodeAddress, MinimumAllowedBalance: "0"}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"local_balance":   map[string]any{"institution": customer, "node_address": nodeAddress, "currency_balances": cbs},
		"remote_balances": []any{},
		"errors":          []any{},
	})
}

// feeJSON is a Fee of the server API.
type feeJSON struct {
	FeeID          string `json:"feeId"`
	Value          num    `json:"value"`
	CurrencyCode   string `json:"currency_code"`
	RoleType       string `json:"role_type"`
	PaymentType    string `json:"payment_type"`
	NodeType       string `json:"node_type"`
	FeeType        string `json:"fee_type"`
	PartnerName    text   `json:"partner_name"`
	AccountName    text   `json:"account_name"`
	UpperLimit     num    `json:"upper_limit"`
	LowerLimit     num    `json:"lower_limit"`
	PayoutMethod   text   `json:"payout_method"`
	FeeCategory    string `json:"fee_category"`
	FeeDescription text   `json:"fee_description"`
}

// fees is this node's fee configuration: per account a percentage fee on
// sending, a flat fee on receiving, and two slabs on the US dollar
// account's sends (an institution fee, charged with the sending fee).
func (s *Sandbox) fees() []feeJSON {
	r := s.rng(tagFee, 0, 0)
	var out []feeJSON
	for _, a := range ours {
		out = append(out,
			feeJSON{FeeID: newUUID(r), Value: num(decimal.New(int64(10+r.IntN(41)), -2).String()), CurrencyCode: a.currency,
				RoleType: "SENDING", PaymentType: "REGULAR", NodeType: "INITIAL", FeeType: "PERCENTAGE",
				PartnerName: nodeAddress, AccountName: text(a.name), FeeCategory: "NONE", FeeDescription: "sending fee"},
			feeJSON{FeeID: newUUID(r), Value: num(fiat(decimal.New(int64(100+r.IntN(401)), -2))), CurrencyCode: a.currency,
				RoleType: "RECEIVING", PaymentType: "REGULAR", NodeType: "TERMINAL", FeeType: "FLAT_RATE",
				PartnerName: nodeAddress, AccountName: text(a.name), FeeCategory: "PROCESSING_HANDLING_CHARGE"})
	}
	for i, slab := range [][2]string{{"0", "1000"}, {"1000", "1000000"}} {
		out = append(out, feeJSON{FeeID: newUUID(r), Value: num(fiat(decimal.New(int64(5-i*3), 0))), CurrencyCode: "USD",
			RoleType: "INSTITUTION_SENDING", PaymentType: "REGULAR", NodeType: "INITIAL", FeeType: "FLAT_RATE",
			PartnerName: nodeAddress, AccountName: "acme_usd", LowerLimit: num(slab[0]), UpperLimit: num(slab[1]),
			FeeCategory: "OVERSEAS_DELIVERY_CHARGES"})
	}
	return out
}

// listFees serves GET /v4/config/fees: page zero-based, size 1..100 (default 10).
func (s *Sandbox) listFees(w http.ResponseWriter, r *http.Request) {
	page, size, bad := pageParams(r.URL.Query(), 10, extract.MaxServerPage)
	if bad != "" {
		serverError(w, http.StatusBadRequest, "E0120", "invalid_request", bad)
		return
	}
	fees := s.api.fees
	writePage(w, "content", len(fees), page, size, []sortJSON{}, func(i int) json.RawMessage { return mustJSON(fees[i]) })
}
