package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jonboulle/clockwork"

	"recon/extract/raw"
	"recon/output"
	"recon/pipeline"
)

func day(s string) time.Time {
	t, err := time.Parse(raw.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func win(from, to string) raw.Window { return raw.Window{From: day(from), To: day(to)} }

func TestNightlyWindow(t *testing.T) {
	sch := pipeline.Schedule{Cron: "30 0 * * *", RecheckDays: 7, CatchUpDays: 35}
	now := time.Date(2026, 10, 5, 0, 30, 0, 0, time.UTC)
	tests := []struct {
		name    string
		last    time.Time
		want    raw.Window
		skipped *raw.Window
	}{
		{"no complete run yet", time.Time{}, win("2026-09-27", "2026-10-04"), nil},
		{"yesterday done: recheck only", day("2026-10-04"), win("2026-09-27", "2026-10-04"), nil},
		{"missed days inside the recheck", day("2026-09-30"), win("2026-09-27", "2026-10-04"), nil},
		{"missed days before the recheck", day("2026-09-20"), win("2026-09-21", "2026-10-04"), nil},
		{"at the catch-up limit", day("2026-08-30"), win("2026-08-31", "2026-10-04"), nil},
		{"beyond the catch-up limit", day("2026-07-01"), win("2026-08-31", "2026-10-04"), &raw.Window{From: day("2026-07-02"), To: day("2026-08-30")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := pipeline.NightlyWindow(now, tt.last, sch)
			if got != tt.want {
				t.Errorf("window %s, want %s", got, tt.want)
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		name string
		s    pipeline.Schedule
		want []string // every problem, reported at once
	}{
		{"default", pipeline.DefaultSchedule, nil},
		{"bad cron and days", pipeline.Schedule{Cron: "30 0 * *", RecheckDays: -1, CatchUpDays: 400},
			[]string{"RECON_CRON", "RECON_RECHECK_DAYS", "RECON_CATCH_UP_DAYS"}},
		{"time zone", pipeline.Schedule{Cron: "CRON_TZ=Europe/Paris 30 0 * * *", RecheckDays: 7, CatchUpDays: 35}, []string{"always UTC"}},
		{"catch-up shorter than recheck", pipeline.Schedule{Cron: "30 0 * * *", RecheckDays: 7, CatchUpDays: 7}, []string{"RECON_CATCH_UP_DAYS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("Validate() = %v, want problems %v", err, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v lacks %q", err, w)
				}
			}
		})
	}
}

// call is one run the scheduler started.
type call struct {
	at time.Time
	w  raw.Window
}

// harness drives a Scheduler on a fake clock with a runner that records its
// calls and writes a complete run into the real published DuckDB file.
type harness struct {
	clock   *clockwork.FakeClock
	cfg     pipeline.Config
	calls   chan call
	release chan struct{} // nil: runs finish at once
	logs    chan string

	mu              sync.Mutex
	running, maxRun int
}

func newHarness(t *testing.T, start time.Time, sch pipeline.Schedule) *harness {
	t.Helper()
	h := &harness{clock: clockwork.NewFakeClockAt(start), calls: make(chan call, 10), logs: make(chan string, 10000)}
	h.cfg = pipeline.Config{DB: filepath.Join(t.TempDir(), "recon.duckdb"), Schedule: sch, Command: "recon schedule (test)",
		Logger: slog.New(chanHandler{h.logs})}
	return h
}

func (h *harness) run(ctx context.Context, cfg pipeline.Config, w raw.Window) (*pipeline.Result, error) {
	h.mu.Lock()
	h.running++
	h.maxRun = max(h.maxRun, h.running)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running--
		h.mu.Unlock()
	}()
	h.calls <- call{h.clock.Now(), w}
	if h.release != nil {
		<-h.release
	}
	id := pipeline.RunID(h.clock.Now()) + "-" + w.From.Format("0102")
	if err := insertRun(ctx, cfg.DB, id, w, output.Complete); err != nil {
		return nil, err
	}
	return &pipeline.Result{RunID: id, Window: w, Verdict: output.Complete}, nil
}

// serve starts the scheduler and returns a function that stops it and
// returns Serve's error.
func (h *harness) serve(t *testing.T) func() error {
	t.Helper()
	s, err := pipeline.NewScheduler(h.cfg, h.clock, h.run)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	h.waitLog(t, "scheduler started")
	stop := func() error {
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return stop
}

// advanceTo waits for the job's timer, then moves the clock to at.
func (h *harness) advanceTo(t *testing.T, at time.Time) {
	t.Helper()
	if err := h.clock.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(at.Sub(h.clock.Now()))
}

func (h *harness) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(time.Minute):
		t.Fatal("no run started")
	}
	return call{}
}

// fire advances the clock to at and returns the run it starts.
func (h *harness) fire(t *testing.T, at time.Time) call {
	t.Helper()
	h.advanceTo(t, at)
	return h.next(t)
}

func (h *harness) waitLog(t *testing.T, msg string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case m := <-h.logs:
			if strings.Contains(m, msg) {
				return
			}
		case <-deadline:
			t.Fatalf("no log %q", msg)
		}
	}
}

// chanHandler sends each record's message to a channel.
type chanHandler struct{ ch chan<- string }

func (h chanHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h chanHandler) Handle(_ context.Context, r slog.Record) error {
	h.ch <- r.Message
	return nil
}
func (h chanHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h chanHandler) WithGroup(string) slog.Handler      { return h }

// insertRun records a run in the published file, through a working copy as a real run does.
func insertRun(ctx context.Context, db, id string, w raw.Window, verdict string) error {
	wh, err := pipeline.OpenWarehouse(ctx, db)
	if err != nil {
		return err
	}
	if _, err := wh.DB.ExecContext(ctx, `INSERT INTO runs (run_id, window_from, window_to, as_of, started_at, finished_at, verdict)
		VALUES (?, ?, ?, now(), now(), now(), ?)`, id, w.From, w.To, verdict); err != nil {
		wh.Discard()
		return err
	}
	return wh.Publish(ctx)
}

func TestSchedulerFiresAt0030UTC(t *testing.T) {
	h := newHarness(t, time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), pipeline.DefaultSchedule)
	h.serve(t)
	first := time.Date(2026, 10, 5, 0, 30, 0, 0, time.UTC)
	want := []call{{first, win("2026-09-27", "2026-10-04")}, {first.AddDate(0, 0, 1), win("2026-09-28", "2026-10-05")}}
	got := []call{h.fire(t, want[0].at), h.fire(t, want[1].at)}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(call{})); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
}

// TestSchedulerCatchesUp starts the scheduler days after the last complete
// run: it runs the missed days at once, each exactly once, then goes on nightly.
func TestSchedulerCatchesUp(t *testing.T) {
	start := time.Date(2026, 10, 5, 10, 0, 0, 0, time.UTC)
	h := newHarness(t, start, pipeline.Schedule{Cron: "30 0 * * *", RecheckDays: 1, CatchUpDays: 35})
	ctx := t.Context()
	if err := insertRun(ctx, h.cfg.DB, "r-old", win("2026-09-01", "2026-09-25"), output.Complete); err != nil {
		t.Fatal(err)
	}
	// An incomplete run does not count as done.
	if err := insertRun(ctx, h.cfg.DB, "r-incomplete", win("2026-09-26", "2026-09-28"), output.Incomplete); err != nil {
		t.Fatal(err)
	}
	h.serve(t)
	catchUp := h.next(t)
	h.waitLog(t, "run done")
	if want := (call{start, win("2026-09-26", "2026-10-04")}); catchUp != want {
		t.Fatalf("catch-up %v %s, want %v %s", catchUp.at, catchUp.w, want.at, want.w)
	}
	// Then nightly: yesterday and the one recheck day, nothing older.
	fire := time.Date(2026, 10, 6, 0, 30, 0, 0, time.UTC)
	if got, want := h.fire(t, fire), (call{fire, win("2026-10-04", "2026-10-05")}); got != want {
		t.Fatalf("nightly %v %s, want %v %s", got.at, got.w, want.at, want.w)
	}
	// Each missed day (2026-09-26 .. 2026-10-04) was caught up exactly once.
	for d := day("2026-09-26"); !d.After(day("2026-10-04")); d = d.AddDate(0, 0, 1) {
		if n := btoi(catchUp.w.Contains(d)); n != 1 {
			t.Errorf("%s caught up %d times", d.Format(raw.DateLayout), n)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSchedulerSingleton fires the job while the previous run still goes:
// the firing waits for that run to end, never runs alongside.
func TestSchedulerSingleton(t *testing.T) {
	h := newHarness(t, time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), pipeline.DefaultSchedule)
	h.release = make(chan struct{}, 1)
	h.serve(t)
	first := time.Date(2026, 10, 5, 0, 30, 0, 0, time.UTC)
	h.fire(t, first) // the first run starts and waits for release
	second := first.AddDate(0, 0, 1)
	h.advanceTo(t, second)
	// gocron arms the next timer once it has queued the firing: the
	// firing is now waiting behind the first run.
	if err := h.clock.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h.release <- struct{}{} // the first run ends
	got := h.next(t)
	h.release <- struct{}{}
	if want := (call{second, win("2026-09-28", "2026-10-05")}); got != want {
		t.Errorf("queued firing ran %v %s, want %v %s", got.at, got.w, want.at, want.w)
	}
	h.waitLog(t, "run done")
	h.waitLog(t, "run done")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxRun != 1 {
		t.Errorf("%d runs at once, want 1", h.maxRun)
	}
}

// TestSecondSchedulerFailsFast: two schedulers on one database never run.
func TestSecondSchedulerFailsFast(t *testing.T) {
	h := newHarness(t, time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), pipeline.DefaultSchedule)
	h.serve(t)
	s, err := pipeline.NewScheduler(h.cfg, h.clock, h.run)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Serve(t.Context())
	var le *pipeline.LockError
	if !errors.Is(err, pipeline.ErrLocked) || !errors.As(err, &le) || le.Holder == nil || le.Holder.Command != h.cfg.Command {
		t.Fatalf("second scheduler: %v", err)
	}
}
