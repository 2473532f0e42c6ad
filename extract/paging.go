package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// pageInfo is what paging needs from one page envelope.
type pageInfo struct {
	count, number int
	last          bool
	total         int64
	items         []json.RawMessage
}

// pager describes one paged list.
type pager struct {
	op    string                // names the list in errors
	url   func(page int) string // the URL of a zero-based page, with its explicit size
	parse func([]byte) (pageInfo, error)
	// done, when set, sees every page and may end paging before the last
	// one (transfers: once a page reaches past the window).
	done func(pageInfo) (bool, error)
	// growing lists may gain items at their head while paging (transfers,
	// newest first): their totals may change, which repeats items but skips none.
	growing bool
}

// fetchPages GETs pages 0, 1, … until the last one (or until done) and
// returns every body, so nothing is processed before the whole list is read
// (the spec: paging over a changing list can skip items). It checks the
// envelope: page numbers in order, no empty page before the last, and, unless
// the list grows, a steady total that the pages add up to.
func (c *Client) fetchPages(ctx context.Context, p pager) ([][]byte, error) {
	var (
		pages       [][]byte
		seen, total int64
	)
	for page := 0; ; page++ {
		op := fmt.Sprintf("%s page %d", p.op, page)
		body, _, err := c.getRaw(ctx, op, p.url(page))
		if err != nil {
			return nil, err
		}
		info, err := p.parse(body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if page == 0 {
			total = info.total
		}
		seen += int64(info.count)
		switch {
		case info.number != page:
			err = fmt.Errorf("page number is %d", info.number)
		case !info.last && info.count == 0:
			err = errors.New("empty page that is not the last")
		case p.growing:
		case info.total != total:
			err = fmt.Errorf("total changed from %d to %d while paging", total, info.total)
		case seen > total || (info.last && seen != total):
			err = fmt.Errorf("pages hold %d items so far, the total is %d", seen, total)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		pages = append(pages, body)
		stop := info.last
		if p.done != nil {
			enough, err := p.done(info)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			stop = stop || enough
		}
		if stop {
			return pages, nil
		}
	}
}

// pageSeq yields the bodies fetch returns, in page order; fetch runs when the
// sequence is ranged over, and an error is yielded once, alone.
func pageSeq(fetch func() ([][]byte, error)) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		pages, err := fetch()
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

// parseEnvelope reads the spec's page envelope with its items in the named
// field: content (server API) or results (liquidations).
func parseEnvelope(items string) func([]byte) (pageInfo, error) {
	return func(body []byte) (pageInfo, error) {
		var env map[string]json.RawMessage
		if err := json.Unmarshal(body, &env); err != nil {
			return pageInfo{}, fmt.Errorf("decode page: %w", err)
		}
		var (
			p    pageInfo
			errs []error
		)
		for _, f := range []struct {
			name string
			dst  any
		}{{items, &p.items}, {"last", &p.last}, {"number", &p.number}, {"totalElements", &p.total}} {
			field, dst := f.name, f.dst
			raw, ok := env[field]
			if !ok || string(raw) == "null" {
				errs = append(errs, fmt.Errorf("page envelope lacks %s", field))
				continue
			}
			if err := json.Unmarshal(raw, dst); err != nil {
				errs = append(errs, fmt.Errorf("page envelope field %s: %w", field, err))
			}
		}
		p.count = len(p.items)
		return p, errors.Join(errs...)
	}
}
