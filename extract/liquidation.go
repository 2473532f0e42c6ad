package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"recon/extract/raw"
)

func (c *Client) liquidationPager(w raw.Window, size int) pager {
	p := pager{
		op:    "liquidations " + w.String(),
		url:   func(page int) string { return c.liquidationListURL(w, page, size) },
		env:   raw.Results,
		items: true,
		size:  size,
		err:   c.needLiquidationURL(),
	}
	if p.err == nil && (size < 1 || size > MaxLiquidationPage) {
		p.err = fmt.Errorf("page size %d, want 1..%d", size, MaxLiquidationPage)
	}
	return p
}

func (c *Client) liquidationListURL(w raw.Window, page, size int) string {
	q := url.Values{
		"start_date": {w.Start().Format(TimeFormat)},
		"end_date":   {w.End().Format(TimeFormat)}, // exclusive
		"page":       {strconv.Itoa(page)},
		"size":       {strconv.Itoa(size)},
	}
	return c.cfg.LiquidationURL + PathLiquidations + "?" + q.Encode()
}

func (c *Client) liquidationURL(id string) string {
	return c.cfg.LiquidationURL + PathLiquidations + "/" + url.PathEscape(id)
}

// Liquidation returns the raw body of one liquidation, with its trade
// requests and their executions; it checks that the body is that liquidation.
func (c *Client) Liquidation(ctx context.Context, id string) ([]byte, error) {
	op := "liquidation " + id
	if err := c.needLiquidationURL(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	body, _, err := c.getRaw(ctx, op, c.liquidationURL(id))
	if err != nil {
		return nil, err
	}
	var got struct {
		ID string `json:"id"`
	}
	if err := decodeJSON(body, &got); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", op, err)
	}
	if got.ID != id {
		return nil, fmt.Errorf("%s: the answer is liquidation %q", op, got.ID)
	}
	return body, nil
}

func (c *Client) needLiquidationURL() error {
	if c.cfg.LiquidationURL == "" {
		return errNoLiquidationURL
	}
	return nil
}

var errNoLiquidationURL = errors.New("LiquidationURL is not configured")

// listedLiquidation is one liquidation of the list: its id, and whether the
// item carries its trade requests (DESIGN §3: its list page, saved as it
// is, holds the whole record and no detail call is needed).
type listedLiquidation struct {
	id    string
	whole bool // false: a summary; GET /liquidations/{id} gives the trades
}

// liquidationIDs collects the listed liquidations in list order, each once
// (a list that changed while paging may repeat one: the first is kept; the
// loader applies the same rule to the saved pages).
type liquidationIDs struct {
	items []listedLiquidation
	seen  map[string]bool
}

// add takes the items of one list page.
func (l *liquidationIDs) add(items []json.RawMessage) error {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, item := range items {
		var v struct {
			ID            string          `json:"id"`
			TradeRequests json.RawMessage `json:"trade_requests"`
		}
		if err := decodeJSON(item, &v); err != nil || v.ID == "" {
			return errors.New("an item without an id")
		}
		if l.seen[v.ID] {
			continue
		}
		id := strings.Clone(v.ID) // not a view into the page, which is dropped
		l.seen[id] = true
		tr := bytes.TrimSpace(v.TradeRequests)
		l.items = append(l.items, listedLiquidation{id: id, whole: len(tr) > 0 && tr[0] == '['})
	}
	return nil
}
