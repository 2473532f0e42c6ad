package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// StatementPages yields the raw bodies of every page of an account's
// statement over w, in page order. It fetches all pages before yielding any
// (paging over a changing list can skip entries) and checks that the pages
// hold exactly total_elements entries. size is the explicit page size (1..MaxStatementPage).
func (c *Client) StatementPages(ctx context.Context, account string, w Window, size int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		pages, err := c.statementPages(ctx, account, w, size)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, p := range pages {
			if !yield(p, nil) {
				return
			}
		}
	}
}

func (c *Client) statementPages(ctx context.Context, account string, w Window, size int) ([][]byte, error) {
	if size < 1 || size > MaxStatementPage {
		return nil, fmt.Errorf("statement %s: page size %d, want 1..%d", account, size, MaxStatementPage)
	}
	var (
		pages [][]byte
		seen  int64
		total int64
	)
	for page := 0; ; page++ {
		op := fmt.Sprintf("statement %s %s page %d", account, w, page)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.statementURL(account, w, page, size), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		req.Header.Set("Accept", "application/json")
		var body []byte
		if err := c.do(ctx, op, req, func(resp *http.Response) (err error) {
			body, err = io.ReadAll(resp.Body)
			return err
		}); err != nil {
			return nil, err
		}
		p, err := parseStatementPage(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if page == 0 {
			total = p.total
		}
		seen += int64(p.count)
		switch {
		case p.number != page:
			err = fmt.Errorf("page number is %d", p.number)
		case p.total != total:
			err = fmt.Errorf("total_elements changed from %d to %d while paging", total, p.total)
		case seen > total || (p.last && seen != total):
			err = fmt.Errorf("pages hold %d entries so far, total_elements is %d", seen, total)
		case !p.last && p.count == 0:
			err = errors.New("empty page that is not the last")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		pages = append(pages, body)
		if p.last {
			return pages, nil
		}
	}
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

// statementPage is what paging needs from a statement page envelope.
type statementPage struct {
	count, number int
	last          bool
	total         int64
}

func parseStatementPage(body []byte) (statementPage, error) {
	var env struct {
		Transactions *struct {
			Content       *[]json.RawMessage `json:"content"`
			Last          *bool              `json:"last"`
			Number        *int               `json:"number"`
			TotalElements *int64             `json:"total_elements"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return statementPage{}, fmt.Errorf("decode page: %w", err)
	}
	t := env.Transactions
	if t == nil || t.Content == nil || t.Last == nil || t.Number == nil || t.TotalElements == nil {
		return statementPage{}, errors.New("page envelope lacks transactions.content, last, number or total_elements")
	}
	return statementPage{count: len(*t.Content), number: *t.Number, last: *t.Last, total: *t.TotalElements}, nil
}
