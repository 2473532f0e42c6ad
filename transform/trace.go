package transform

import "context"

// Trace holds optional hooks that follow a load as it goes, in the manner of
// net/http/httptrace: a progress display sets them with WithTrace. Nil hooks
// are skipped.
type Trace struct {
	Started func(files int)                  // Load starts on files raw files
	Loaded  func(stats FileStats, files int) // a report, or a statement slice of files pages, was loaded
}

type traceKey struct{}

// WithTrace returns a context whose loads call t's hooks.
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

func (t *Trace) started(files int) {
	if t.Started != nil {
		t.Started(files)
	}
}

func (t *Trace) loaded(fs FileStats, files int) {
	if t.Loaded != nil {
		t.Loaded(fs, files)
	}
}
