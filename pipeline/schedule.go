package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"recon/extract/raw"
)

// Schedule configures `recon schedule`.
type Schedule struct {
	Cron        string // five-field cron expression, evaluated in UTC
	RecheckDays int    // days before yesterday reconciled again each night, so late items resolve or age
	CatchUpDays int    // the most days a run reaches back to catch up days missed since the last complete run
}

// DefaultSchedule fires at 00:30 UTC, after the provider's month-to-date
// reports appear (about 00:01 UTC).
var DefaultSchedule = Schedule{Cron: "30 0 * * *", RecheckDays: 7, CatchUpDays: 35}

// maxCatchUpDays keeps a catch-up inside the provider's nine-month report window.
const maxCatchUpDays = 270

// Validate reports every problem of the schedule at once.
func (s Schedule) Validate() error {
	var errs []error
	if strings.HasPrefix(s.Cron, "TZ=") || strings.HasPrefix(s.Cron, "CRON_TZ=") {
		errs = append(errs, fmt.Errorf("RECON_CRON %q: the schedule is always UTC; drop the time zone", s.Cron))
	} else if err := gocron.NewDefaultCron(false).IsValid(s.Cron, time.UTC, time.Now()); err != nil {
		errs = append(errs, fmt.Errorf("RECON_CRON %q: want five fields (minute hour day month weekday): %w", s.Cron, err))
	}
	if s.RecheckDays < 0 {
		errs = append(errs, fmt.Errorf("RECON_RECHECK_DAYS is %d, want 0 or more", s.RecheckDays))
	}
	if s.CatchUpDays <= s.RecheckDays || s.CatchUpDays > maxCatchUpDays {
		errs = append(errs, fmt.Errorf("RECON_CATCH_UP_DAYS is %d, want more than RECON_RECHECK_DAYS (%d) and at most %d",
			s.CatchUpDays, s.RecheckDays, maxCatchUpDays))
	}
	return errors.Join(errs...)
}

// NightlyWindow is the window a nightly run at now reconciles: yesterday and
// the RecheckDays before it, reaching further back to the day after
// lastComplete (the last day a complete run covered; zero if none) to catch
// up missed days, but never more than CatchUpDays days. skipped holds the
// missed days beyond that limit, nil if none.
func NightlyWindow(now, lastComplete time.Time, s Schedule) (w raw.Window, skipped *raw.Window) {
	today, _ := raw.NewWindow(now, now)
	yesterday := today.From.AddDate(0, 0, -1)
	from := yesterday.AddDate(0, 0, -s.RecheckDays)
	if !lastComplete.IsZero() {
		if next := lastComplete.AddDate(0, 0, 1); next.Before(from) {
			from = next
		}
	}
	if floor := yesterday.AddDate(0, 0, 1-s.CatchUpDays); from.Before(floor) {
		skipped = &raw.Window{From: from, To: floor.AddDate(0, 0, -1)}
		from = floor
	}
	return raw.Window{From: from, To: yesterday}, skipped
}

// RunFunc reconciles a window; Run is the one outside tests.
type RunFunc func(context.Context, Config, raw.Window) (*Result, error)

// Scheduler runs the nightly reconciliation of `recon schedule`.
type Scheduler struct {
	cfg   Config
	clock clockwork.Clock
	run   RunFunc
	log   *slog.Logger
}

// stopTimeout bounds how long Serve waits at shutdown for a run that is
// publishing; the process manager's own grace period is the real bound.
const stopTimeout = time.Hour

// NewScheduler checks cfg.Schedule and returns a scheduler driven by clock
// (nil: the real clock) that reconciles with run (nil: Run).
func NewScheduler(cfg Config, clock clockwork.Clock, run RunFunc) (*Scheduler, error) {
	if err := cfg.Schedule.Validate(); err != nil {
		return nil, err
	}
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	if run == nil {
		run = Run
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	return &Scheduler{cfg: cfg, clock: clock, run: run, log: log}, nil
}

// Serve holds the scheduler lock, catches up the days missed since the last
// complete run, then reconciles at every firing of the cron expression (UTC)
// until ctx is done. Runs never overlap (gocron's singleton mode): a firing
// during a run waits for it to end. When ctx ends, the run in progress either
// finishes publishing or is discarded.
func (s *Scheduler) Serve(ctx context.Context) error {
	lock, err := TryLock(SchedulerLockPath(s.cfg.DB), s.cfg.Command, s.clock.Now())
	if err != nil {
		return fmt.Errorf("another scheduler runs on %s: %w", s.cfg.DB, err)
	}
	defer lock.Release()
	sched, err := gocron.NewScheduler(
		gocron.WithClock(s.clock), gocron.WithLocation(time.UTC), gocron.WithLogger(s.log),
		gocron.WithStopTimeout(stopTimeout),
	)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	job, err := sched.NewJob(gocron.CronJob(s.cfg.Schedule.Cron, false), gocron.NewTask(s.nightly),
		gocron.WithName("nightly"), gocron.WithSingletonMode(gocron.LimitModeWait), gocron.WithContext(ctx))
	if err != nil {
		sched.Shutdown()
		return fmt.Errorf("scheduler: %w", err)
	}
	sched.Start()
	next, _ := job.NextRun()
	s.log.Info("scheduler started", "cron", s.cfg.Schedule.Cron, "next_run", next, "db", s.cfg.DB)
	if s.missedDays(ctx) {
		if err := job.RunNow(); err != nil {
			s.log.Error("could not start the catch-up run; the next firing catches up", "err", err)
		}
	}
	<-ctx.Done()
	s.log.Info("scheduler stopping: a run in progress publishes or is discarded")
	if err := sched.Shutdown(); err != nil {
		return fmt.Errorf("scheduler shutdown: %w", err)
	}
	s.log.Info("scheduler stopped")
	return nil
}

// missedDays reports whether days before today lack a complete run.
func (s *Scheduler) missedDays(ctx context.Context) bool {
	last, err := LastComplete(ctx, s.cfg.DB)
	if err != nil {
		s.log.Error("cannot tell which days were missed; the next firing retries", "err", err)
		return false
	}
	if last.IsZero() {
		s.log.Info("no complete run yet: nothing to catch up; backfill older days with recon run --from --to")
		return false
	}
	w, _ := NightlyWindow(s.clock.Now(), last, s.cfg.Schedule)
	if !last.Before(w.To) {
		return false
	}
	s.log.Info("catching up", "last_complete_day", last.Format(raw.DateLayout))
	return true
}

// nightly is the job: one run over the window NightlyWindow gives.
func (s *Scheduler) nightly(ctx context.Context) {
	last, err := LastComplete(ctx, s.cfg.DB)
	if err != nil {
		s.log.Error("run not started; the next firing retries", "err", err)
		return
	}
	w, skipped := NightlyWindow(s.clock.Now(), last, s.cfg.Schedule)
	if skipped != nil {
		s.log.Warn("missed days beyond the catch-up limit are not reconciled; run them by hand",
			"days", skipped.String(), "command", fmt.Sprintf("recon run --from %s --to %s",
				skipped.From.Format(raw.DateLayout), skipped.To.Format(raw.DateLayout)))
	}
	s.log.Info("run starting", "window", w.String())
	res, err := s.run(ctx, s.cfg, w)
	switch {
	case err != nil && ctx.Err() != nil:
		s.log.Warn("run stopped before publishing; nothing changed", "window", w.String(), "err", err)
	case err != nil:
		s.log.Error("run failed; the next firing retries its days", "window", w.String(), "err", err)
	default:
		s.log.Info("run done", "window", w.String(), "run_id", res.RunID, "verdict", res.Verdict, "open_breaks", res.Open)
	}
}
