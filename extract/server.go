package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"recon/extract/raw"
)

// PaymentQuery selects server API payments by a time range.
type PaymentQuery struct {
	RangeField    string    // EXECUTED_AT, MODIFIED_AT or CREATED_AT
	After, Before time.Time // exclusive bounds
	Labels        []string  // with_labels: only payments that carry these labels
}

// PaymentQueries are the payment lists a run pulls over w at now, in order:
// one list modified since w's start for a recent window (RecentWindow),
// else the payments executed and the payments modified in w.
func PaymentQueries(w raw.Window, now time.Time) []PaymentQuery {
	after := w.Start().Add(-time.Millisecond)
	if RecentWindow(w, now) {
		return []PaymentQuery{{RangeField: PaymentModifiedAt, After: after}}
	}
	return []PaymentQuery{{RangeField: PaymentExecutedAt, After: after, Before: w.End()},
		{RangeField: PaymentModifiedAt, After: after, Before: w.End()}}
}

// paymentPath names page p of q's list over w: payments/<from>_<to>_p<NNNN>.json
// by executed_at, payments/modified_<from>_<to>_p<NNNN>.json by modified_at,
// payments/since_<from>_p<NNNN>.json modified since w's start (raw.PaymentsSince).
func paymentPath(q PaymentQuery, w raw.Window, page int) string {
	from := w.From.Format(raw.DateLayout)
	switch {
	case q.Before.IsZero():
		return fmt.Sprintf("%s%s_p%04d.json", raw.PaymentsSincePrefix, from, page)
	case q.RangeField == PaymentExecutedAt:
		return fmt.Sprintf("payments/%s_%s_p%04d.json", from, w.To.Format(raw.DateLayout), page)
	}
	prefix := strings.ToLower(strings.TrimSuffix(q.RangeField, "_AT")) + "_"
	return fmt.Sprintf("payments/%s%s_%s_p%04d.json", prefix, from, w.To.Format(raw.DateLayout), page)
}

// paymentsWhat names q's list in a plan: "payments by executed_at",
// "payments by modified_at since the window's start".
func paymentsWhat(q PaymentQuery) string {
	what := "payments by " + strings.ToLower(q.RangeField)
	if q.Before.IsZero() {
		what += " since the window's start"
	}
	return what
}

func (c *Client) paymentPager(q PaymentQuery, size int) pager {
	op := fmt.Sprintf("payments by %s after %s", q.RangeField, q.After.UTC().Format(TimeFormat))
	if !q.Before.IsZero() {
		op += " before " + q.Before.UTC().Format(TimeFormat)
	}
	if q.RangeField == "" {
		op = "payments with labels " + strings.Join(q.Labels, ",")
	}
	p := pager{
		op:   op,
		url:  func(page int) string { return c.paymentURL(q, page, size) },
		env:  raw.Content,
		size: size,
	}
	if size < 1 || size > MaxServerPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxServerPage)
	}
	return p
}

func (c *Client) paymentURL(q PaymentQuery, page, size int) string {
	v := url.Values{"page": {strconv.Itoa(page)}, "size": {strconv.Itoa(size)}}
	if q.RangeField != "" {
		v.Set("range_field", q.RangeField)
	}
	if !q.After.IsZero() {
		v.Set("after", q.After.UTC().Format(TimeFormat))
	}
	if !q.Before.IsZero() {
		v.Set("before", q.Before.UTC().Format(TimeFormat))
	}
	for _, l := range q.Labels {
		v.Add("with_labels", l)
	}
	return c.cfg.ServerURL + PathPayments + "?" + v.Encode()
}

func (c *Client) transferPager(since time.Time, size int) pager {
	var prev time.Time
	p := pager{
		op:      "transfers since " + since.UTC().Format(TimeFormat),
		url:     func(page int) string { return c.transferURL(page, size) },
		env:     raw.Content,
		items:   true,
		growing: true,
		size:    size,
		done: func(p raw.Page) (bool, error) {
			for _, item := range p.Items {
				var t struct {
					CreatedAt time.Time `json:"created_at"`
				}
				if err := decodeJSON(item, &t); err != nil || t.CreatedAt.IsZero() {
					return false, fmt.Errorf("a transfer without a created_at (%v)", err)
				}
				if !prev.IsZero() && t.CreatedAt.After(prev) {
					return false, fmt.Errorf("transfers are not newest first: %s after %s",
						t.CreatedAt.UTC().Format(TimeFormat), prev.UTC().Format(TimeFormat))
				}
				prev = t.CreatedAt
			}
			return !prev.IsZero() && prev.Before(since), nil
		},
	}
	if size < 1 || size > MaxServerPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxServerPage)
	}
	return p
}

func (c *Client) transferURL(page, size int) string {
	v := url.Values{
		"page": {strconv.Itoa(page)}, "size": {strconv.Itoa(size)},
		"sort_field": {TransferSortField}, "sort_direction": {TransferSortDesc},
	}
	return c.cfg.ServerURL + PathTransfers + "?" + v.Encode()
}

func (c *Client) feePager(size int) pager {
	p := pager{op: "fees", url: func(page int) string { return c.feeURL(page, size) }, env: raw.Content, size: size}
	if size < 1 || size > MaxServerPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxServerPage)
	}
	return p
}

func (c *Client) feeURL(page, size int) string {
	return c.cfg.ServerURL + PathFees + "?" + url.Values{"page": {strconv.Itoa(page)}, "size": {strconv.Itoa(size)}}.Encode()
}

// Balances returns the raw balances snapshot and when it was taken: the
// response's Date header, else the client's clock.
func (c *Client) Balances(ctx context.Context) ([]byte, time.Time, error) {
	body, header, err := c.getRaw(ctx, "balances", c.cfg.ServerURL+PathBalances)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !json.Valid(body) {
		return nil, time.Time{}, fmt.Errorf("balances: the answer is not JSON")
	}
	at, err := http.ParseTime(header.Get("Date"))
	if err != nil {
		at = c.cfg.Now()
	}
	return body, at.UTC(), nil
}
