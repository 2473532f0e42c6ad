package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"recon/extract/raw"
	"recon/output"
	"recon/rules"
	"recon/transform"
)

// Result is what a run did.
type Result struct {
	RunID       string
	Window      raw.Window
	Verdict     string   // output.Complete or output.Incomplete
	Reasons     []string // why incomplete
	Found       map[string]int64
	Pending     int64 // unmatched items still inside their grace period
	Open        int64 // open breaks of the window: not resolved, not explained or written off
	Unhandled   int64 // of those, the ones nobody acknowledged (--fail-on-breaks)
	Resolved    int64
	Loaded      map[string]int64
	Quarantined int64 // malformed rows set aside (table quarantine)
	Changes     int64 // values a newer generation of a report changed (table report_changes)
	DB          string
	Archive     string // the run's folder in the archive

	started time.Time
	stages  []stage // the stages begun, the last one perhaps unfinished
}

// RunID names a run by its UTC start time.
func RunID(start time.Time) string { return start.UTC().Format(output.RunIDLayout) }

// StatementWindow is the window of statements pulled for a report window: one
// day longer, so payments executed after midnight still find their entry, but
// never past today.
func StatementWindow(w raw.Window, now time.Time) raw.Window {
	s := raw.Window{From: w.From, To: w.To.AddDate(0, 0, 1)}
	if today, _ := raw.NewWindow(now, now); s.To.After(today.To) {
		s.To = today.To
	}
	if s.To.Before(s.From) {
		s.To = s.From
	}
	return s
}

// StatementTail is the statement pulled beside the statement window sw of a
// run started at now: the day of now, when sw ends before it, so the balances
// snapshot (taken at now) and the ledger describe the same instant for
// balance_snapshot_mismatch (the statement's opening_balance is the ledger
// at that day's start, its entries bring it to the snapshot). Zero when sw
// reaches today, as a nightly run's does.
func StatementTail(sw raw.Window, now time.Time) raw.Window {
	today, _ := raw.NewWindow(now, now)
	if !sw.To.Before(today.From) {
		return raw.Window{}
	}
	return today
}

// Run reconciles the window: extract, load, rules, report, archive, and
// finally publish the DuckDB file. Any error leaves the published file and
// the archive as they were. It holds the writer lock of cfg.DB throughout
// (failing at once with a *LockError if another process holds it) and
// writes cfg.MetricsFile at the end, whatever the outcome.
//
// A run still short of publishing after cfg.RunTimeout is stopped and ends
// incomplete (see timedOut); from the report stage on it finishes, as it
// does when asked to stop.
func Run(ctx context.Context, cfg Config, w raw.Window) (*Result, error) {
	cfg, err := prepared(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	lock, err := TryLock(WriterLockPath(cfg.DB), cfg.Command, cfg.Now())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	defer limitGoMemory()()
	started := cfg.Now()
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if cfg.RunTimeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, cfg.RunTimeout, errRunTimeout)
	}
	res, err := run(runCtx, cfg, w)
	if err != nil && res != nil && ctx.Err() == nil && errors.Is(context.Cause(runCtx), errRunTimeout) &&
		(errors.Is(err, errRunTimeout) || errors.Is(err, context.DeadlineExceeded)) {
		res, err = timedOut(context.WithoutCancel(ctx), cfg, res, err)
	}
	cancel()
	if perr := pruneFailed(cfg); perr != nil {
		cfg.Logger.Warn("failed runs' folders not pruned", "dir", cfg.WorkDir, "err", perr)
	}
	if cfg.MetricsFile != "" {
		if merr := writeMetrics(context.WithoutCancel(ctx), cfg, res, err, started, cfg.Now()); merr != nil {
			cfg.Logger.Warn("metrics file not written", "file", cfg.MetricsFile, "err", merr)
		}
	}
	return res, err
}

// runner carries one run through its stages.
type runner struct {
	cfg            Config // prepared, its extract logger the run's
	log            *slog.Logger
	res            *Result
	runDir, rawDir string
	rows           output.Rows  // rows of each raw file, as the load counted them (for the manifest)
	store          output.Store // the archive
	endStored      bool         // the end state is in the state cache
}

func run(ctx context.Context, cfg Config, w raw.Window) (*Result, error) {
	started := cfg.Now().UTC()
	res := &Result{RunID: RunID(started), Window: w, Verdict: output.Complete, DB: cfg.DB, started: started}
	r := &runner{cfg: cfg, log: cfg.Logger.With("run_id", res.RunID), res: res, runDir: filepath.Join(cfg.WorkDir, res.RunID)}
	r.cfg.Extract.Logger = r.log
	r.rawDir = filepath.Join(r.runDir, output.InputsDir)
	if err := os.MkdirAll(r.rawDir, 0o755); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	store, err := output.OpenStore(ctx, cfg.ArchiveURL, cfg.S3)
	if err != nil {
		return nil, err
	}
	r.store = store
	files, err := r.extract(ctx)
	if err != nil {
		return res, err
	}
	// The raw files are written back while the load works (waited for on return).
	defer output.WriteBack(store, r.rawDir)()
	spoolNext, spooled, err := spoolRead(r.rawDir, files) // notification.go
	if err != nil {
		return res, err
	}
	spooled = spooled && cfg.InputDir == "" // recon load: the raw files' spool range is not this spool's
	wh, err := OpenWarehouse(ctx, cfg.DB)
	if err != nil {
		return res, err
	}
	published := false
	defer func() {
		if !published {
			wh.Discard()
		}
	}()
	info, err := r.reconcile(ctx, wh.DB, files, wh.Sealed(store.URL()))
	if err != nil {
		return res, err
	}
	// From here the run commits: once asked to stop, it finishes report,
	// archive, ledger and publish rather than leave half a run.
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("stopped before publishing: %w", context.Cause(ctx))
	}
	published, err = r.publish(context.WithoutCancel(ctx), wh, store, info)
	if published && spooled {
		commitSpool(cfg.WebhookSpool, spoolNext, r.log)
	}
	return res, err
}

// timed runs the stage name, logs it and adds it to the run's stages; its
// error is prefixed with its name.
func (r *runner) timed(name string, fn func() (int64, error)) error {
	st := stage{name: name, start: r.cfg.Now().UTC()}
	r.log.Info("stage started", "stage", name)
	n, err := fn()
	st.end, st.rows = r.cfg.Now().UTC(), n
	r.res.stages = append(r.res.stages, st)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.log.Info("stage finished", "stage", name, "rows", n, "seconds", st.end.Sub(st.start).Seconds())
	return nil
}

// extract is the extract stage: the run's raw files, in its folder.
func (r *runner) extract(ctx context.Context) ([]raw.File, error) {
	var files []raw.File
	err := r.timed("extract", func() (int64, error) {
		ex, err := extractStage(ctx, r.cfg, r.res.Window, r.res.started, r.rawDir)
		if err != nil {
			return 0, err
		}
		files = ex.Files
		r.res.Reasons = append(r.res.Reasons, ex.Incomplete...)
		return int64(len(files)), nil
	})
	return files, err
}

// reconcile saves the run's starting state and rules (inputs, for replay),
// then runs the load and rules stages on db; it returns the run's info with
// its verdict. sealed says db holds the end state the last run stored.
func (r *runner) reconcile(ctx context.Context, db *sql.DB, files []raw.File, sealed bool) (output.RunInfo, error) {
	res := r.res
	if err := r.timed("state", func() (int64, error) { // its rows: the slices written, not in the cache
		if sealed {
			r.log.Info("state sealed by the last run: its slices are the end state it stored")
		}
		n, err := output.SaveInputs(ctx, db, r.store, r.runDir, r.cfg.catalogue, sealed)
		return int64(n), err
	}); err != nil {
		return output.RunInfo{}, err
	}
	// Workflow actions journalled since the last run, applied before the
	// rules and archived with the inputs (pipeline/journal.go).
	if _, err := applyJournal(ctx, db, JournalPath(r.cfg.DB), r.runDir, res.RunID, r.log); err != nil {
		return output.RunInfo{}, err
	}
	var loaded transform.Stats
	if err := r.timed("load", func() (int64, error) {
		var err error
		loaded, err = loadStage(ctx, db, r.rawDir, res.RunID, files, r.log)
		var n int64
		for _, f := range loaded.Files {
			n += f.Rows
		}
		return n, err
	}); err != nil {
		return output.RunInfo{}, err
	}
	res.Loaded = map[string]int64{}
	for _, f := range loaded.Files {
		res.Loaded[f.File.Source] += f.Rows
	}
	res.Quarantined, res.Changes = loaded.Quarantined(), loaded.Changes()
	r.rows = inputRows(loaded)
	files, skipped := unreadable(files, loaded.Unreadable)
	res.Reasons = append(res.Reasons, skipped...)

	info := runInfo(r.cfg, res)
	if err := r.timed("rules", func() (int64, error) {
		found, err := rulesStage(ctx, db, r.cfg.catalogue, info, files)
		return r.judged(found), err
	}); err != nil {
		return info, err
	}
	if len(res.Reasons) > 0 {
		res.Verdict = output.Incomplete
	}
	info.Verdict, info.Reasons = res.Verdict, res.Reasons
	return info, nil
}

// judged takes the rules' outcome into the result and returns the breaks found.
func (r *runner) judged(found rules.Result) int64 {
	res := r.res
	res.Found, res.Resolved = found.Found, found.Resolved
	for _, h := range found.Held {
		if h.Quiet { // a source not configured (the wallet): held, but no reason
			r.log.Info("rule held: its source is not configured", "rule", h.Rule, "table", h.Table)
			continue
		}
		res.Reasons = append(res.Reasons, fmt.Sprintf("rule %s held for %s: %s is incomplete", h.Rule, h.Window, h.Table))
	}
	var n int64
	for _, rule := range r.cfg.catalogue {
		id := rule.ID
		n += found.Found[id]
		res.Pending += found.Pending[id]
		r.log.Info("rule", "rule", id, "breaks", found.Found[id], "pending", found.Pending[id], "seconds", found.Took[id].Seconds())
	}
	return n
}

// publish runs the report and archive stages, records the run in the
// ledger and publishes wh; published says whether it did.
//
// The files are uploaded before the publish and the manifest, which makes
// them a run, after it, so an archived run is always a published one. A
// failed upload makes the run incomplete but still publishes the database:
// the reports are right, only their archived copy is missing, and the run
// folder stays in the work folder until ArchiveRun (recon archive --run)
// uploads it.
func (r *runner) publish(ctx context.Context, wh *Warehouse, store output.Store, info output.RunInfo) (published bool, err error) {
	res, log := r.res, r.log
	if err := r.timed("report", func() (int64, error) {
		s, err := reportStage(ctx, wh.DB, info, r.runDir)
		return s.Breaks.Open + s.Breaks.Resolved, err
	}); err != nil {
		return false, err
	}
	manifest, archived := r.upload(ctx, wh.DB, store, &info)
	ledger := Ledger{wh.DB}
	if res.Open, res.Unhandled, err = ledger.OpenBreaks(ctx, res.Window); err != nil {
		return false, err
	}
	if err := ledger.recordRun(ctx, info, res.stages, &res.Open, res.Archive, r.cfg.Now().UTC()); err != nil {
		return false, err
	}
	if r.endStored {
		wh.SealAs(store.URL())
	}
	if err := wh.Publish(ctx); err != nil {
		return false, err
	}
	if archived == nil {
		archived = commitArchive(ctx, r.cfg, store, res, manifest, log)
	}
	log.Info("run published", "verdict", res.Verdict, "open_breaks", res.Open, "quarantined", res.Quarantined,
		"report_changes", res.Changes, "db", r.cfg.DB, "archive", res.Archive)
	if archived == nil {
		if err := os.RemoveAll(r.runDir); err != nil {
			log.Warn("could not remove the run folder", "dir", r.runDir, "err", err)
		}
	}
	return true, nil
}

// upload is the archive stage: the run's files, without their manifest.
// A failure makes the run incomplete (info too) and is returned.
func (r *runner) upload(ctx context.Context, db *sql.DB, store output.Store, info *output.RunInfo) (output.Manifest, error) {
	res := r.res
	var manifest output.Manifest
	err := r.timed(archiveStage, func() (int64, error) {
		t0 := r.cfg.Now()
		m, err := output.Upload(ctx, store, *info, r.runDir, r.rows)
		if err == nil {
			r.log.Info("archive uploaded; its manifest follows the publish", "files", len(m.Files), "bytes", m.Size(),
				"seconds", r.cfg.Now().Sub(t0).Seconds())
			// The next run references these slices instead of writing them
			// again; without the cache it only writes them all again.
			if cerr := output.SaveStateCache(ctx, db, store.URL(), r.runDir, m); cerr != nil {
				r.log.Warn("state cache not saved", "err", cerr)
			} else {
				r.saveEndState(ctx, db, store)
			}
		}
		manifest = m
		return int64(len(m.Files)), err
	})
	if err == nil {
		res.Archive = store.URL() + "/" + output.RunPrefix(res.RunID, res.started)
		return manifest, nil
	}
	r.log.Error("archive failed; the run folder is kept", "dir", r.runDir, "err", err)
	res.Verdict = output.Incomplete
	res.Reasons = append(res.Reasons, archiveReason(res.RunID, err))
	info.Verdict, info.Reasons = res.Verdict, res.Reasons
	return manifest, err
}

// saveEndState stores the slices of the state the run leaves, the one the
// next run starts from, and puts them in the state cache (in the working
// copy, published with the run), so the next run's state stage writes none
// of them. A failure changes nothing of the run: the next run writes them.
// Once stored, the run seals the file it publishes (Warehouse.SealAs).
func (r *runner) saveEndState(ctx context.Context, db *sql.DB, store output.Store) {
	t0 := r.cfg.Now()
	es, err := output.SaveEndState(ctx, db, store, r.runDir, r.res.RunID)
	if err != nil {
		r.log.Warn("end state not stored; the next run writes its slices", "err", err)
		return
	}
	r.endStored = es.Slices > 0
	r.log.Info("end state stored", "slices", es.Slices, "hashed", es.Hashed, "written", es.Written, "bytes", es.Bytes,
		"seconds", r.cfg.Now().Sub(t0).Seconds())
}

// errRunTimeout is the cause of a run's context past cfg.RunTimeout.
var errRunTimeout = errors.New("run timeout")

// timedOut ends a run stopped by its deadline before it published: nothing
// of its data is published (the database and the archive are as before), but
// the run ledger gets the run as incomplete, with the reason "run timeout
// after D" and its stages up to the one stopped, so recon runs, the metrics
// and the exit code (incomplete) show it; the next run retries its days.
func timedOut(ctx context.Context, cfg Config, res *Result, runErr error) (*Result, error) {
	stage := "start"
	if n := len(res.stages); n > 0 {
		stage = res.stages[n-1].name
	}
	reason := fmt.Sprintf("run timeout after %s: stopped in %s, nothing was published (%v)", cfg.RunTimeout, stage, runErr)
	cfg.Logger.Error("run timeout: stopped before publishing; the database and archive are as before",
		"run_id", res.RunID, "timeout", cfg.RunTimeout.String(), "stage", stage, "err", runErr)
	res.Verdict, res.Reasons = output.Incomplete, append(res.Reasons, reason)
	res.Found, res.Loaded, res.Open, res.Unhandled = nil, nil, 0, 0
	info := output.RunInfo{ID: res.RunID, Window: res.Window, AsOf: res.started, StartedAt: res.started,
		ToolVersion: cfg.Version, Verdict: res.Verdict, Reasons: res.Reasons}
	wh, err := OpenWarehouse(ctx, cfg.DB)
	if err != nil {
		return res, fmt.Errorf("%s; record it in the run ledger: %w", reason, err)
	}
	if err := (Ledger{wh.DB}).recordRun(ctx, info, res.stages, nil, "", cfg.Now().UTC()); err != nil {
		wh.Discard()
		return res, fmt.Errorf("%s: %w", reason, err)
	}
	if err := wh.Publish(ctx); err != nil {
		wh.Discard()
		return res, fmt.Errorf("%s; record it in the run ledger: %w", reason, err)
	}
	return res, nil
}

func loadRules(dir string) ([]rules.Rule, error) {
	dirs := []rules.Dir{rules.Builtin}
	if dir != "" {
		dirs = append(dirs, rules.Dir{Name: dir, FS: os.DirFS(dir)})
	}
	r, err := rules.Load(dirs...)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return r, nil
}
