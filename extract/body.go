package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the body bounds (Config.BodyIdleTimeout, MaxBodyBytes, MaxDownloadBytes).
const (
	DefaultBodyIdleTimeout  = time.Minute
	DefaultMaxBodyBytes     = 256 << 20 // one API answer: a page, a report record, a liquidation
	DefaultMaxDownloadBytes = 50 << 30  // raw files one Extract writes
)

// Sentinel errors of the body bounds, always wrapped.
var (
	// ErrStalled is returned when a response body gives no byte for
	// Config.BodyIdleTimeout; it is retried.
	ErrStalled = errors.New("response body stalled")
	// ErrBodyTooLarge is returned when an API answer (not a report download)
	// holds more than Config.MaxBodyBytes, counted after gzip; it is not retried.
	ErrBodyTooLarge = errors.New("response body too large")
	// ErrDiskBudget is returned when the raw files of one Extract would pass
	// Config.MaxDownloadBytes; it is not retried.
	ErrDiskBudget = errors.New("download budget of the run exhausted")
)

// limits bound one request: the wait for its headers and the size of its body.
type limits struct {
	headers time.Duration // wait for the response headers
	maxBody int64         // most bytes of the decoded body; 0: no cap (report downloads)
}

// apiCall is the limits of an API answer; download those of a report download.
func (c *Client) apiCall() limits  { return limits{HeaderTimeout, c.cfg.MaxBodyBytes} }
func (c *Client) download() limits { return limits{DownloadHeaderTimeout, 0} }

// guardedBody is a response body that fails with ErrStalled when one Read
// waits longer than idle (the request is cancelled through stop), and with
// ErrBodyTooLarge past max bytes. net/http has already removed any gzip
// encoding it asked for, so the bytes counted are the decoded ones.
type guardedBody struct {
	r     io.ReadCloser
	idle  time.Duration // 0: no idle deadline
	stop  func()        // cancels the request
	max   int64         // 0: no cap
	n     int64
	timer *time.Timer
	fired atomic.Bool
}

func guard(body io.ReadCloser, idle time.Duration, stop func(), max int64) *guardedBody {
	return &guardedBody{r: body, idle: idle, stop: stop, max: max}
}

// Read implements io.Reader.
func (g *guardedBody) Read(p []byte) (int, error) {
	if g.max > 0 && int64(len(p)) > g.max-g.n+1 {
		p = p[:g.max-g.n+1] // one byte more than allowed tells a body at the cap from one past it
	}
	if g.idle > 0 {
		if g.timer == nil {
			g.timer = time.AfterFunc(g.idle, func() { g.fired.Store(true); g.stop() })
		} else {
			g.timer.Reset(g.idle)
		}
	}
	n, err := g.r.Read(p)
	if g.timer != nil {
		g.timer.Stop()
	}
	g.n += int64(n)
	if g.max > 0 && g.n > g.max {
		return n - int(g.n-g.max), fmt.Errorf("%w: more than %d bytes (raise the cap, RECON_MAX_BODY, if the provider's answers are this large)", ErrBodyTooLarge, g.max)
	}
	if err != nil && err != io.EOF && g.fired.Load() {
		return n, fmt.Errorf("%w: no byte for %s after %d bytes", ErrStalled, g.idle, g.n)
	}
	return n, err
}

// Close implements io.Closer.
func (g *guardedBody) Close() error {
	if g.timer != nil {
		g.timer.Stop()
	}
	return g.r.Close()
}

// diskBudget counts the raw bytes one Extract writes against a cap.
type diskBudget struct {
	max  int64 // 0: no cap
	used atomic.Int64
}

// take books n more bytes, or fails with ErrDiskBudget (booking nothing).
func (b *diskBudget) take(n int64) error {
	if used := b.used.Add(n); b.max > 0 && used > b.max {
		b.used.Add(-n)
		return fmt.Errorf("%w: more than %d bytes of raw files (RECON_MAX_DOWNLOAD_BYTES)", ErrDiskBudget, b.max)
	}
	return nil
}

// give returns n bytes that are no longer on disk.
func (b *diskBudget) give(n int64) { b.used.Add(-n) }

// budgetReader books every byte read from r in b; booked counts them.
type budgetReader struct {
	r      io.Reader
	b      *diskBudget
	booked int64
}

func (r *budgetReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		if berr := r.b.take(int64(n)); berr != nil {
			return 0, berr
		}
		r.booked += int64(n)
	}
	return n, err
}

// runState is what one Extract shares between its jobs: the disk budget and
// the raw file names given to provider ids.
type runState struct {
	budget *diskBudget
	mu     sync.Mutex
	names  map[string]string // raw file path -> the provider id written there
	made   map[string]bool   // ids of the reports this run created (or found it had)
}

// created records that this run made report id.
func (s *runState) created(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made[id] = true
}

// used reports whether this run already made report id.
func (s *runState) used(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made[id]
}

type runKey struct{}

// withRun returns ctx carrying a fresh runState.
func (c *Client) withRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, runKey{}, &runState{budget: &diskBudget{max: c.cfg.MaxDownloadBytes}, names: map[string]string{}, made: map[string]bool{}})
}

// runOf returns ctx's runState; outside Extract (a lone DownloadReport) a
// fresh one.
func (c *Client) runOf(ctx context.Context) *runState {
	if s, ok := ctx.Value(runKey{}).(*runState); ok {
		return s
	}
	return c.withRun(ctx).Value(runKey{}).(*runState)
}

// ErrNameClash is returned when two provider ids map to the same raw file
// name (safeName): the second is refused, not written over the first.
var ErrNameClash = errors.New("two ids map to one raw file name")

// claim gives the raw file path rel to id, or fails naming both ids when
// another id holds it.
func (s *runState) claim(rel, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.names[rel]; ok && prev != id {
		return fmt.Errorf("%w: %q and %q both map to %s", ErrNameClash, prev, id, rel)
	}
	s.names[rel] = id
	return nil
}
