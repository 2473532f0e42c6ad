package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"recon/extract"
	"recon/transform"
)

// progress draws a bar for the extraction (jobs, report polls, bytes
// downloaded) and one for the load (files, rows) of a run.
type progress struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars []*mpb.Bar

	polls, bytes, rows atomic.Int64
	pending            atomic.Value // status of the last report polled
}

// withProgress returns ctx carrying the progress hooks, when stderr is a
// terminal, and a function that removes the bars. Log lines print above
// the bars meanwhile. Elsewhere it changes nothing: no bar in files or pipes.
func (a *app) withProgress(ctx context.Context) (context.Context, func()) {
	if !a.tty {
		return ctx, func() {}
	}
	pr := newProgress(a.stderr)
	a.logOut.set(pr.p)
	ctx = extract.WithTrace(ctx, pr.extractTrace())
	ctx = transform.WithTrace(ctx, pr.loadTrace())
	return ctx, func() {
		pr.stop()
		a.logOut.set(a.stderr)
	}
}

func newProgress(w io.Writer, opts ...mpb.ContainerOption) *progress {
	pr := &progress{p: mpb.New(append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(30)}, opts...)...)}
	pr.pending.Store("")
	return pr
}

func (pr *progress) bar(name string, total int, extra decor.DecorFunc) *mpb.Bar {
	b := pr.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(name, decor.WC{W: 8, C: decor.DindentRight}), decor.CountersNoUnit("%d/%d", decor.WC{W: 9})),
		mpb.AppendDecorators(decor.Any(extra), decor.Elapsed(decor.ET_STYLE_GO, decor.WC{W: 6})),
	)
	pr.mu.Lock()
	pr.bars = append(pr.bars, b)
	pr.mu.Unlock()
	return b
}

func (pr *progress) extractTrace() *extract.Trace {
	var b atomic.Pointer[mpb.Bar]
	return &extract.Trace{
		Planned: func(jobs int) {
			b.Store(pr.bar("extract", jobs, func(decor.Statistics) string {
				return fmt.Sprintf("%d polls %s  %.1f MiB ", pr.polls.Load(), pr.pending.Load(), float64(pr.bytes.Load())/(1<<20))
			}))
		},
		JobDone: func() {
			if bar := b.Load(); bar != nil {
				bar.Increment()
			}
		},
		Polled: func(_, status string) {
			pr.polls.Add(1)
			pr.pending.Store("(last " + status + ")")
		},
		Downloaded: func(n int64) { pr.bytes.Add(n) },
	}
}

func (pr *progress) loadTrace() *transform.Trace {
	var b atomic.Pointer[mpb.Bar]
	return &transform.Trace{
		Started: func(files int) {
			b.Store(pr.bar("load", files, func(decor.Statistics) string {
				return fmt.Sprintf("%d rows ", pr.rows.Load())
			}))
		},
		Loaded: func(fs transform.FileStats, files int) {
			pr.rows.Add(fs.Rows)
			if bar := b.Load(); bar != nil {
				bar.IncrBy(files)
			}
		},
	}
}

// stop leaves unfinished bars as they stand (a stopped or failed run) and
// stops drawing.
func (pr *progress) stop() {
	pr.mu.Lock()
	for _, b := range pr.bars {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	pr.mu.Unlock()
	pr.p.Wait()
}
