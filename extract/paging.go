package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"recon/extract/raw"
)

// pager describes one paged list.
type pager struct {
	op  string                // names the list in errors
	url func(page int) string // the URL of a zero-based page, with its explicit size
	env raw.Envelope          // the form of its pages
	// items keeps each page's items (raw.Page.Items) for keep and done;
	// other lists only count them.
	items bool
	// done, when set, sees every page and may end paging before the last
	// one (transfers: once a page reaches past the window).
	done func(raw.Page) (bool, error)
	// growing lists may gain items at their head while paging (transfers,
	// newest first): their totals may change, which repeats items but skips none.
	growing bool
	// size is the page size asked for: pages are fetched ahead up to the
	// last one the total gives; a growing list's pages past its total are refused.
	size int
	max  int   // most pages fetched (0: MaxListPages)
	err  error // a request that cannot be made (a bad page size): nothing is fetched
}

// fetchPages GETs pages 0, 1, … until the last one (or until done), the
// next ones ahead of the one in hand (prefetch), and hands each checked
// page to keep in order, so no list is held in memory. It checks the
// envelope: page numbers in order, no empty page before the last, and,
// unless the list grows, a steady total that the pages add up to, and for
// a growing list no page past its latest total. No list gives more than
// MaxListPages pages. Nothing may be processed before it returns nil (the
// spec: paging over a changing list can skip items): the page iterators
// yield only then, and Extract only writes the pages to their raw files on
// the way.
func (c *Client) fetchPages(ctx context.Context, p pager, keep func(raw.Page, []byte) error) error {
	if p.err != nil {
		return fmt.Errorf("%s: %w", p.op, p.err)
	}
	var seen, total int64
	limit := cmp.Or(p.max, MaxListPages)
	ahead := newPrefetch(ctx, c, p)
	defer ahead.stop()
	for page := 0; ; page++ {
		op := fmt.Sprintf("%s page %d", p.op, page)
		if page >= limit {
			return fmt.Errorf("%s: more than %d pages without a last one", op, limit)
		}
		f := ahead.get(page)
		if f.err != nil {
			return f.err
		}
		info, body := f.info, f.body
		if page == 0 {
			total = info.Total
			if !p.growing && p.done == nil && p.size > 0 && total > 0 {
				ahead.last = min(int((total-1)/int64(p.size)), limit-1)
			}
		}
		count := info.Count
		seen += int64(count)
		var err error
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

// fetchedPage is one fetched and parsed page of a list, or why it is not.
type fetchedPage struct {
	info raw.Page
	body []byte
	err  error
}

// prefetch fetches the pages of one list, up to PagesAhead past the one
// asked for while they are known to exist (up to last): one page at a time,
// the provider rendered a page while recon waited, then recon kept it while
// the provider waited (docs/performance.md).
type prefetch struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	p      pager
	last   int // highest page known to exist
	wg     sync.WaitGroup
	coming map[int]chan fetchedPage
}

func newPrefetch(ctx context.Context, c *Client, p pager) *prefetch {
	ctx, cancel := context.WithCancel(ctx)
	return &prefetch{c: c, ctx: ctx, cancel: cancel, p: p, coming: map[int]chan fetchedPage{}}
}

// get returns page n, having started the fetches of the pages after it.
func (f *prefetch) get(n int) fetchedPage {
	for k := n; k == n || k <= min(n+PagesAhead, f.last); k++ {
		if _, ok := f.coming[k]; ok {
			continue
		}
		ch := make(chan fetchedPage, 1)
		f.coming[k] = ch
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			ch <- f.fetch(k)
		}()
	}
	pg := <-f.coming[n]
	delete(f.coming, n)
	return pg
}

// fetch GETs and parses page n.
func (f *prefetch) fetch(n int) fetchedPage {
	op := fmt.Sprintf("%s page %d", f.p.op, n)
	body, _, err := f.c.getRaw(f.ctx, op, f.p.url(n))
	if err != nil {
		return fetchedPage{err: err}
	}
	parse := f.p.env.Count
	if f.p.items {
		parse = f.p.env.Parse
	}
	info, err := parse(body)
	if err != nil {
		return fetchedPage{err: fmt.Errorf("%s: %w", op, err)}
	}
	return fetchedPage{info: info, body: body}
}

// stop cancels the pages still coming and waits for them.
func (f *prefetch) stop() {
	f.cancel()
	f.wg.Wait()
}
