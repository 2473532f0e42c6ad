package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
)

// LiquidationPages yields the raw pages of the liquidations created in w
// (start_date inclusive, end_date exclusive), in page order, after fetching
// them all. size is the explicit page size (1..MaxLiquidationPage). The
// items are summaries: Liquidation gives trade requests and executions.
func (c *Client) LiquidationPages(ctx context.Context, w Window, size int) iter.Seq2[[]byte, error] {
	return pageSeq(func() ([][]byte, error) {
		op := "liquidations " + w.String()
		if err := c.needLiquidationURL(op); err != nil {
			return nil, err
		}
		if size < 1 || size > MaxLiquidationPage {
			return nil, fmt.Errorf("%s: page size %d, want 1..%d", op, size, MaxLiquidationPage)
		}
		return c.fetchPages(ctx, pager{
			op:    op,
			url:   func(page int) string { return c.liquidationListURL(w, page, size) },
			parse: parseEnvelope("results"),
		})
	})
}

func (c *Client) liquidationListURL(w Window, page, size int) string {
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
	if err := c.needLiquidationURL(op); err != nil {
		return nil, err
	}
	body, _, err := c.getRaw(ctx, op, c.liquidationURL(id))
	if err != nil {
		return nil, err
	}
	var got struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", op, err)
	}
	if got.ID != id {
		return nil, fmt.Errorf("%s: the answer is liquidation %q", op, got.ID)
	}
	return body, nil
}

// LiquidationsByPayment returns the liquidations of one payment, each as
// its raw JSON object, for a targeted refresh.
func (c *Client) LiquidationsByPayment(ctx context.Context, paymentID string) ([]json.RawMessage, error) {
	op := "liquidations of payment " + paymentID
	if err := c.needLiquidationURL(op); err != nil {
		return nil, err
	}
	body, _, err := c.getRaw(ctx, op, c.cfg.LiquidationURL+PathLiquidationByID+url.PathEscape(paymentID))
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", op, err)
	}
	return out, nil
}

func (c *Client) needLiquidationURL(op string) error {
	if c.cfg.LiquidationURL == "" {
		return fmt.Errorf("%s: %w", op, errNoLiquidationURL)
	}
	return nil
}

var errNoLiquidationURL = errors.New("LiquidationURL is not configured")

// liquidationIDs returns the ids of the listed liquidations in list order,
// each once (a list that changed while paging may repeat one).
func liquidationIDs(pages [][]byte) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for i, body := range pages {
		p, err := parseEnvelope("results")(body)
		if err != nil {
			return nil, fmt.Errorf("liquidation page %d: %w", i, err)
		}
		for _, item := range p.items {
			var l struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(item, &l); err != nil || l.ID == "" {
				return nil, fmt.Errorf("liquidation page %d: an item without an id", i)
			}
			if !seen[l.ID] {
				seen[l.ID] = true
				ids = append(ids, l.ID)
			}
		}
	}
	return ids, nil
}
