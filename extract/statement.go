package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

func (c *Client) statementPager(account string, w Window, size int) pager {
	p := pager{
		op:    fmt.Sprintf("statement %s %s", account, w),
		url:   func(page int) string { return c.statementURL(account, w, page, size) },
		parse: parseStatementPage,
	}
	if size < 1 || size > MaxStatementPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxStatementPage)
	}
	return p
}

func (c *Client) statementURL(account string, w Window, page, size int) string {
	q := url.Values{
		"start-date": {w.Start().Format(TimeFormat)},
		"end-date":   {w.End().Format(TimeFormat)}, // exclusive
		"page":       {strconv.Itoa(page)},
		"size":       {strconv.Itoa(size)},
	}
	return c.cfg.ServerURL + PathStatement + url.PathEscape(account) + "?" + q.Encode()
}

// parseStatementPage reads a statement's envelope: transactions{content, last, number, total_elements}.
func parseStatementPage(body []byte) (pageInfo, error) {
	var env struct {
		Transactions *struct {
			Content       *[]json.RawMessage `json:"content"`
			Last          *bool              `json:"last"`
			Number        *int               `json:"number"`
			TotalElements *int64             `json:"total_elements"`
		} `json:"transactions"`
	}
	if err := decodeJSON(body, &env); err != nil {
		return pageInfo{}, fmt.Errorf("decode page: %w", err)
	}
	t := env.Transactions
	if t == nil || t.Content == nil || t.Last == nil || t.Number == nil || t.TotalElements == nil {
		return pageInfo{}, errors.New("page envelope lacks transactions.content, last, number or total_elements")
	}
	return pageInfo{count: len(*t.Content), number: *t.Number, last: *t.Last, total: *t.TotalElements, items: *t.Content}, nil
}
