package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"recon/extract"
	"recon/output"
	"recon/rules"
	"recon/transform"
)

// Result is what a run did.
type Result struct {
	RunID       string
	Window      extract.Window
	Verdict     string   // output.Complete or output.Incomplete
	Reasons     []string // why incomplete
	Found       map[string]int64
	Pending     int64 // unmatched items still inside their grace period
	Open        int64
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
func StatementWindow(w extract.Window, now time.Time) extract.Window {
	s := extract.Window{From: w.From, To: w.To.AddDate(0, 0, 1)}
	if today, _ := extract.NewWindow(now, now); s.To.After(today.To) {
		s.To = today.To
	}
	if s.To.Before(s.From) {
		s.To = s.From
	}
	return s
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
func Run(ctx context.Context, cfg Config, w extract.Window) (*Result, error) {
	if err := cfg.Validate(); err != nil {
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

func run(ctx context.Context, cfg Config, w extract.Window) (*Result, error) {
	now, log := cfg.Now, cfg.Logger
	started := now().UTC()
	res := &Result{RunID: RunID(started), Window: w, Verdict: output.Complete, DB: cfg.DB, started: started}
	log = log.With("run_id", res.RunID)
	cfg.Extract.Logger = log
	runDir := filepath.Join(cfg.WorkDir, res.RunID)
	rawDir := filepath.Join(runDir, output.InputsDir)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	catalogue, err := loadRules(cfg.RulesDir)
	if err != nil {
		return nil, err
	}
	store, err := output.OpenStore(ctx, cfg.ArchiveURL, cfg.S3)
	if err != nil {
		return nil, err
	}
	timed := func(name string, fn func() (int64, error)) error {
		st := stage{name: name, start: now().UTC()}
		log.Info("stage started", "stage", name)
		n, err := fn()
		st.end, st.rows = now().UTC(), n
		res.stages = append(res.stages, st)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		log.Info("stage finished", "stage", name, "rows", n, "seconds", st.end.Sub(st.start).Seconds())
		return nil
	}

	// Extract.
	var files []extract.RawFile
	if err := timed("extract", func() (int64, error) {
		ex, err := extractTo(ctx, cfg, w, started, rawDir)
		if err != nil {
			return 0, err
		}
		files = ex.Files
		res.Reasons = append(res.Reasons, ex.Incomplete...)
		return int64(len(files)), nil
	}); err != nil {
		return res, err
	}

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
	// The state the run starts from and its rules are inputs, for replay.
	if err := output.SaveInputs(ctx, wh.DB, runDir, catalogue); err != nil {
		return res, err
	}

	// Load.
	var loaded transform.Stats
	if err := timed("load", func() (int64, error) {
		loaded, err = transform.NewLoader(wh.DB, rawDir, res.RunID, log).Load(ctx, files)
		var n int64
		for _, f := range loaded.Files {
			n += f.Rows
		}
		if err == nil { // the rules then read compressed, checkpointed tables (docs/performance.md)
			_, err = wh.DB.ExecContext(ctx, "CHECKPOINT")
		}
		return n, err
	}); err != nil {
		return res, err
	}
	res.Loaded = map[string]int64{}
	for _, f := range loaded.Files {
		res.Loaded[f.File.Source] += f.Rows
	}
	res.Quarantined, res.Changes = loaded.Quarantined(), loaded.Changes()

	info := output.RunInfo{
		ID: res.RunID, Window: w, AsOf: started, StartedAt: started, ToolVersion: cfg.Version,
		Accounts: cfg.Accounts, Params: cfg.Params, Rows: res.Loaded, Quarantined: res.Quarantined,
	}
	for _, r := range catalogue {
		info.Rules = append(info.Rules, output.RuleRef{ID: r.ID, Severity: r.Severity, SHA256: r.SHA256})
	}

	// Rules.
	if err := timed("rules", func() (int64, error) {
		r, err := rules.Apply(ctx, wh.DB, catalogue, ruleRun(info, files))
		res.Found, res.Resolved = r.Found, r.Resolved
		for _, h := range r.Held {
			if h.Quiet { // a source not configured (the wallet): held, but no reason
				log.Info("rule held: its source is not configured", "rule", h.Rule, "table", h.Table)
				continue
			}
			res.Reasons = append(res.Reasons, fmt.Sprintf("rule %s held for %s: %s is incomplete", h.Rule, h.Window, h.Table))
		}
		var n int64
		for _, rule := range catalogue {
			id := rule.ID
			n += r.Found[id]
			res.Pending += r.Pending[id]
			log.Info("rule", "rule", id, "breaks", r.Found[id], "pending", r.Pending[id], "seconds", r.Took[id].Seconds())
		}
		return n, err
	}); err != nil {
		return res, err
	}

	if len(res.Reasons) > 0 {
		res.Verdict = output.Incomplete
	}
	info.Verdict, info.Reasons = res.Verdict, res.Reasons

	// From here the run commits: once asked to stop, it finishes report,
	// archive, ledger and publish rather than leave half a run.
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("stopped before publishing: %w", context.Cause(ctx))
	}
	ctx = context.WithoutCancel(ctx)

	// Report and archive: the files are uploaded before the publish and the
	// manifest, which makes them a run, after it, so an archived run is always
	// a published one. A failed upload makes the run incomplete but still
	// publishes the database: the reports are right, only their archived copy
	// is missing, and the run folder stays in the work folder until
	// ArchiveRun (recon archive --run) uploads it.
	if err := timed("report", func() (int64, error) {
		s, err := output.WriteReports(ctx, wh.DB, info, runDir)
		return s.Breaks.Open + s.Breaks.Resolved, err
	}); err != nil {
		return res, err
	}
	var manifest output.Manifest
	archived := timed(archiveStage, func() (int64, error) {
		m, err := output.Upload(ctx, store, info, runDir)
		if err == nil {
			log.Info("archive uploaded; its manifest follows the publish", "files", len(m.Files), "bytes", m.Size())
		}
		manifest = m
		return int64(len(m.Files)), err
	})
	if archived == nil {
		res.Archive = store.URL() + "/" + output.RunPrefix(res.RunID, started)
	} else {
		log.Error("archive failed; the run folder is kept", "dir", runDir, "err", archived)
		res.Verdict = output.Incomplete
		res.Reasons = append(res.Reasons, archiveReason(res.RunID, archived))
		info.Verdict, info.Reasons = res.Verdict, res.Reasons
	}
	if err := wh.DB.QueryRowContext(ctx, `SELECT count(*) FROM breaks WHERE status <> 'resolved'
		AND event_date BETWEEN ? AND ?`, w.From, w.To).Scan(&res.Open); err != nil {
		return res, fmt.Errorf("count open breaks: %w", err)
	}
	if err := recordRun(ctx, wh, info, res.stages, &res.Open, res.Archive, now().UTC()); err != nil {
		return res, err
	}
	if err := wh.Publish(ctx); err != nil {
		return res, err
	}
	published = true
	if archived == nil {
		archived = commitArchive(ctx, cfg, store, res, manifest, log)
	}
	log.Info("run published", "verdict", res.Verdict, "open_breaks", res.Open, "quarantined", res.Quarantined,
		"report_changes", res.Changes, "db", cfg.DB, "archive", res.Archive)
	if archived != nil {
		return res, nil
	}
	if err := os.RemoveAll(runDir); err != nil {
		log.Warn("could not remove the run folder", "dir", runDir, "err", err)
	}
	return res, nil
}

// extractTo fills rawDir with the raw files of w: from the network, or
// from cfg.InputDir (recon load).
func extractTo(ctx context.Context, cfg Config, w extract.Window, started time.Time, rawDir string) (*extract.Result, error) {
	if cfg.InputDir != "" {
		return extract.Reuse(ctx, cfg.InputDir, rawDir)
	}
	client, err := extractClient(cfg, cfg.Now)
	if err != nil {
		return nil, err
	}
	return client.Extract(ctx, extractRequest(cfg, w, started), rawDir)
}

// extractClient is the run's extract client; its clock (the 9-month rule)
// is the run's unless cfg.Extract sets one.
func extractClient(cfg Config, now func() time.Time) (*extract.Client, error) {
	ec := cfg.Extract
	if ec.Now == nil {
		ec.Now = now
	}
	return extract.New(ec)
}

// extractRequest is what a run over w asks of extract, started at started.
// Liquidations and the server API's payments and transfers are pulled over
// the statement window: their times trail the quote, as executed_at does.
// Without a liquidation service the liquidations are not pulled, which
// holds the rules that read them. The wallet is pulled over the window
// itself (its rules judge the window's balances); without a wallet service
// it is not configured, which holds its rules without making the run incomplete.
func extractRequest(cfg Config, w extract.Window, started time.Time) extract.Request {
	sw := StatementWindow(w, started)
	return extract.Request{Reports: w, Statements: sw, Accounts: cfg.Accounts, Format: cfg.Format,
		Mode: cfg.ReportMode, Cleanup: cfg.Cleanup, Server: sw, Liquidations: sw, Wallet: w}
}

type stage struct {
	name       string
	start, end time.Time
	rows       int64
}

// recordRun adds a run to the ledger of wh; open is nil when the open
// breaks are not known (the run did not get to count them).
func recordRun(ctx context.Context, wh *Warehouse, info output.RunInfo, stages []stage, open *int64, archive string, finished time.Time) error {
	tx, err := wh.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		info.ID, info.Window.From, info.Window.To, info.AsOf, info.StartedAt, finished, info.Verdict,
		info.Reasons, open, archive, info.ToolVersion); err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	for _, s := range stages {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_stages VALUES (?, ?, ?, ?, ?)`,
			info.ID, s.name, s.start, s.end, s.rows); err != nil {
			return fmt.Errorf("record stage %s: %w", s.name, err)
		}
	}
	return tx.Commit()
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
	res.Found, res.Loaded, res.Open = nil, nil, 0
	info := output.RunInfo{ID: res.RunID, Window: res.Window, AsOf: res.started, StartedAt: res.started,
		ToolVersion: cfg.Version, Verdict: res.Verdict, Reasons: res.Reasons}
	wh, err := OpenWarehouse(ctx, cfg.DB)
	if err != nil {
		return res, fmt.Errorf("%s; record it in the run ledger: %w", reason, err)
	}
	if err := recordRun(ctx, wh, info, res.stages, nil, "", cfg.Now().UTC()); err != nil {
		wh.Discard()
		return res, fmt.Errorf("%s: %w", reason, err)
	}
	if err := wh.Publish(ctx); err != nil {
		wh.Discard()
		return res, fmt.Errorf("%s; record it in the run ledger: %w", reason, err)
	}
	return res, nil
}

// ruleRun is what the rules judge for a run; Replay calls it with the
// archived run's metadata, so a replay binds exactly what the run bound.
func ruleRun(info output.RunInfo, files []extract.RawFile) rules.Run {
	return rules.Run{ID: info.ID, Window: info.Window, AsOf: info.AsOf, Accounts: info.Accounts,
		Params: info.Params, Gaps: gaps(files)}
}

// gaps lists the tables whose source failed for a window (a FAILED report, a
// liquidation or server API source not pulled): their rows there are missing
// or stale, so the rules reading them are held there. A source not
// configured (NOT_CONFIGURED) gives quiet gaps: held, not incomplete.
func gaps(files []extract.RawFile) []rules.Gap {
	var out []rules.Gap
	for _, f := range files {
		if f.Status != extract.StatusFailed && f.Status != extract.StatusNotConfigured {
			continue
		}
		for _, t := range transform.TablesOf(f.Source) {
			if g := (rules.Gap{Table: t, Window: f.Window, Quiet: f.Status == extract.StatusNotConfigured}); !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
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
