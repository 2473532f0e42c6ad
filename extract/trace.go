package extract

import (
	"context"
	"io"
)

// Trace holds optional hooks that follow an extraction as it goes, in the
// manner of net/http/httptrace: a progress display sets them with WithTrace.
// Nil hooks are skipped; hooks may be called from several goroutines at once.
type Trace struct {
	Planned    func(jobs int)                // Extract starts jobs jobs: report chunks (or collected reports), account statements, other sources
	JobDone    func()                        // a job finished
	Polled     func(reportID, status string) // a report was polled
	Downloaded func(n int64)                 // n more bytes of a report arrived
}

type traceKey struct{}

// WithTrace returns a context whose extractions call t's hooks.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// traceOf returns ctx's trace, or one without hooks.
func traceOf(ctx context.Context) *Trace {
	if t, ok := ctx.Value(traceKey{}).(*Trace); ok && t != nil {
		return t
	}
	return &Trace{}
}

func (t *Trace) planned(jobs int) {
	if t.Planned != nil {
		t.Planned(jobs)
	}
}

func (t *Trace) jobDone() {
	if t.JobDone != nil {
		t.JobDone()
	}
}

func (t *Trace) polled(id, status string) {
	if t.Polled != nil {
		t.Polled(id, status)
	}
}

// reader counts the bytes read from r into Downloaded.
func (t *Trace) reader(r io.Reader) io.Reader {
	if t.Downloaded == nil {
		return r
	}
	return countingReader{r, t.Downloaded}
}

type countingReader struct {
	r   io.Reader
	add func(int64)
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.add(int64(n))
	}
	return n, err
}
