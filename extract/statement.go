package extract

import (
	"fmt"
	"net/url"
	"strconv"

	"recon/extract/raw"
)

func (c *Client) statementPager(account string, w raw.Window, size int) pager {
	p := pager{
		op:   fmt.Sprintf("statement %s %s", account, w),
		url:  func(page int) string { return c.statementURL(account, w, page, size) },
		env:  raw.Transactions,
		size: size,
	}
	if size < 1 || size > MaxStatementPage {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxStatementPage)
	}
	return p
}

func (c *Client) statementURL(account string, w raw.Window, page, size int) string {
	q := url.Values{
		"start-date": {w.Start().Format(TimeFormat)},
		"end-date":   {w.End().Format(TimeFormat)}, // exclusive
		"page":       {strconv.Itoa(page)},
		"size":       {strconv.Itoa(size)},
	}
	return c.cfg.ServerURL + PathStatement + url.PathEscape(account) + "?" + q.Encode()
}
