package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"recon/extract/raw"
)

// pager describes one paged list.
type pager struct {
	op  string                // names the list in errors
	url func(page int) string // the URL of a zero-based page, with its explicit size
	env raw.Envelope          // the form of its pages
	// done, when set, sees every page and may end paging before the last
	// one (transfers: once a page reaches past the window).
	done func(raw.Page) (bool, error)
	// growing lists may gain items at their head while paging (transfers,
	// newest first): their totals may change, which repeats items but skips none.
	growing bool
	size    int   // page size asked for: a growing list's pages past its total are refused
	max     int   // most pages fetched (0: MaxListPages)
	err     error // a request that cannot be made (a bad page size): nothing is fetched
}

// fetchPages GETs pages 0, 1, … until the last one (or until done) and
// hands each checked page to keep as it arrives, so no list is held in
// memory. It checks the envelope: page numbers in order, no empty page
// before the last, and, unless the list grows, a steady total that the pages
// add up to, and for a growing list no page past its latest total. No list
// gives more than MaxListPages pages. Nothing may be processed before it returns nil (the spec: paging
// over a changing list can skip items): the page iterators yield only then,
// and Extract only writes the pages to their raw files on the way.
func (c *Client) fetchPages(ctx context.Context, p pager, keep func(raw.Page, []byte) error) error {
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.op, p.err)
	}
	var seen, total int64
	limit := cmp.Or(p.max, MaxListPages)
	for page := 0; ; page++ {
		op := fmt.Sprintf("%s page %d", p.op, page)
		if page >= limit {
			return fmt.Errorf("%s: more than %d pages without a last one", op, limit)
		}
		body, _, err := c.getRaw(ctx, op, p.url(page))
		if err != nil {
			return err
		}
		info, err := p.env.Parse(body)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if page == 0 {
			total = info.Total
		}
		count := len(info.Items)
		seen += int64(count)
		switch {
		case info.Number != page:
			err = fmt.Errorf("page number is %d", info.Number)
		case !info.Last && count == 0:
			err = errors.New("empty page that is not the last")
		case p.growing && p.size > 0 && int64(page)*int64(p.size) >= info.Total && !info.Last:
			err = fmt.Errorf("page starts past totalElements %d (size %d) and is not the last", info.Total, p.size)
		case p.growing:
		case info.Total != total:
			err = fmt.Errorf("total changed from %d to %d while paging", total, info.Total)
		case seen > total || (info.Last && seen != total):
			err = fmt.Errorf("pages hold %d items so far, the total is %d", seen, total)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if err := keep(info, body); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		stop := info.Last
		if p.done != nil {
			enough, err := p.done(info)
			if err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			stop = stop || enough
		}
		if stop {
			return nil
		}
	}
}
